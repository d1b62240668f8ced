import { FlagError, parseDuration } from '../flags.js';
import { isDateTime } from '../k8s/schema.js';
import type { Cause } from '../log/cause.js';

/**
 * What part of a long history `fleetsim explain` shows: a stretch of time (`--since`, `--until`),
 * the last changes (`--tail`), or, when more changes are left than a screen holds, a summary of
 * them (how many of each change and each cause, the first and the last) with the flags that show
 * more. A simulated day gives a fleet thousands of changes; their causes, one by one, are not what
 * a person reads first.
 */

/** An instant, or a span before the log's last event (a log may be days old, or a simulated day). */
export type TimeBound = { at: number } | { beforeEnd: number };

export interface HistoryWindow {
  since?: TimeBound;
  until?: TimeBound;
  /** The last so many changes of those left. */
  tail?: number;
  /** More changes than this left (and no `tail`): a summary in their place. */
  summarizeOver?: number;
}

/** Changes a text answer lists before it summarizes instead: with their causes, about a screen. */
export const MAX_LISTED = 25;

/** `--since 2026-03-02T18:00:00Z` or `--since 2h` (before the log's end); `flag` names the flag in the error. */
export function parseTimeBound(text: string, flag: string): TimeBound {
  if (isDateTime(text)) return { at: Date.parse(text) };
  try {
    return { beforeEnd: parseDuration(text, flag) };
  } catch {
    throw new FlagError(`${flag}: "${text}" is neither a time (RFC 3339, like 2026-03-02T18:00:00Z) nor a duration before the log's end (like 2h or 30m)`);
  }
}

/** `--tail N`: a whole number from 1. */
export function parseTail(text: string, flag: string): number {
  const tail = /^[0-9]{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(tail >= 1)) throw new FlagError(`${flag}: "${text}" is not a whole number from 1`);
  return tail;
}

export function resolveBound(bound: TimeBound, logEnd: number): number {
  return 'at' in bound ? bound.at : logEnd - bound.beforeEnd;
}

/** One change as a summary tells it. */
export interface ChangeMark {
  seq: number;
  time: string;
  summary: string;
}

export interface HistorySummary {
  changes: number;
  first: ChangeMark;
  last: ChangeMark;
  /** Each kind of change (`Ready → Allocated`, `replicas up`) and how many, most first. */
  byChange: Array<{ what: string; count: number }>;
  /** Each nearest cause (a client's requests, a controller, a timer, an autoscaler) and how many, most first. */
  byCause: Array<{ what: string; count: number }>;
}

/** The changes of a history told as counts (`changes` oldest first, each with its summary and its own cause). */
export function summarize(changes: Array<ChangeMark & { cause: Cause | undefined }>): HistorySummary {
  const count = (pick: (c: ChangeMark & { cause: Cause | undefined }) => string) => {
    const counts = new Map<string, number>();
    for (const change of changes) counts.set(pick(change), (counts.get(pick(change)) ?? 0) + 1);
    return [...counts].map(([what, n]) => ({ what, count: n })).sort((a, b) => b.count - a.count || a.what.localeCompare(b.what));
  };
  const mark = ({ seq, time, summary }: ChangeMark) => ({ seq, time, summary });
  return {
    changes: changes.length,
    first: mark(changes[0]!),
    last: mark(changes[changes.length - 1]!),
    byChange: count((c) => changeKind(c.summary)),
    byCause: count((c) => causeKind(c.cause)),
  };
}

/** A field's move as a change tells it (`currentReplicas 3 → 4`, `lastScaleTime "…" → "…"`): its values, to leave the field's name. */
const FIELD_VALUES = / (?:"[^"]*"|[^\s,]+) → (?:"[^"]*"|[^\s,]+)(?=, |$| and \d+ more$)/g;

/**
 * A change's kind: `replicas 10 → 15` is a scale-up; `status: currentReplicas 3 → 4` the fields
 * that moved; otherwise its words without the figures and the detail in parentheses.
 */
function changeKind(summary: string): string {
  const replicas = /^replicas (\d+) → (\d+)/.exec(summary);
  if (replicas) return Number(replicas[2]) > Number(replicas[1]) ? 'replicas up' : 'replicas down';
  return summary
    .replace(/\s*\(.*$/, '')
    .replace(FIELD_VALUES, '')
    .replace(/ and \d+ more$/, ' and more')
    .replace(/\d+(\.\d+)?/g, 'N');
}

/** Who or what a cause is, without what makes each one different (request ids, figures). */
function causeKind(cause: Cause | undefined): string {
  if (!cause) return 'no cause recorded';
  switch (cause.type) {
    case 'request':
      return `${cause.method} requests from ${cause.client}`;
    case 'sync':
      return `the ${cause.controller} controller`;
    case 'timer':
      return `timer ${cause.timer}`;
    case 'autoscaler':
      return `FleetAutoscaler ${cause.autoscaler.namespace}/${cause.autoscaler.name} (${cause.policy})`;
    case 'process':
      return `the process of a ${cause.object.kind}`;
    case 'startup':
      return 'start-up';
    case 'observed':
      return `seen on cluster ${cause.cluster}`;
  }
}

const ROWS = 8;

/** A summary for people, with the flags that show more; `object` names the object. */
export function formatSummary(object: string, summary: HistorySummary): string {
  const n = (value: number) => value.toLocaleString('en');
  const rows = (list: HistorySummary['byChange']) => {
    const shown = list.slice(0, ROWS).map(({ what, count }) => `    ${n(count).padStart(8)}  ${what}`);
    const rest = list.slice(ROWS).reduce((sum, r) => sum + r.count, 0);
    return rest > 0 ? [...shown, `    ${n(rest).padStart(8)}  ${list.length - ROWS} other kinds`] : shown;
  };
  return [
    `${object}: ${n(summary.changes)} changes from ${summary.first.time} to ${summary.last.time}`,
    `  first  #${summary.first.seq} ${summary.first.time}  ${summary.first.summary}`,
    `  last   #${summary.last.seq} ${summary.last.time}  ${summary.last.summary}`,
    '  by change:',
    ...rows(summary.byChange),
    '  by cause:',
    ...rows(summary.byCause),
    `More than ${MAX_LISTED} changes: --tail N lists the last N with their causes, --since and --until a stretch`,
    "(a time, like 2026-03-02T18:00:00Z, or a duration before the log's end, like 2h), --all every one.",
  ].join('\n');
}
