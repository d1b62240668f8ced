import { stringify } from 'yaml';
import { EventLog, type StoredEvent } from './log/event-log.js';
import type { GameServer } from './kinds/gameserver-types.js';
import { ReadModel } from './runtime/read-model.js';
import { stringifyJsonExact } from './log/json.js';

export interface ReplayOptions {
  /** Stop after this sequence number (inclusive). */
  toSeq?: number;
  /** Stop after this time (inclusive). */
  untilTime?: number;
}

/** Rebuilds the read model from a log file, as it was at a sequence number or a time. */
export function replayLog(path: string, options: ReplayOptions = {}): ReadModel {
  const log = new EventLog(path, { readonly: true });
  try {
    const model = new ReadModel();
    for (const event of log.read({ toSeq: options.toSeq, untilTime: options.untilTime })) model.apply(event);
    return model;
  } finally {
    log.close();
  }
}

/** The events of one object, in order. */
export function objectEvents(path: string, kind: string, namespace: string, name: string, options: ReplayOptions = {}): StoredEvent[] {
  const log = new EventLog(path, { readonly: true });
  try {
    return [...log.read({ kind, namespace, name, toSeq: options.toSeq, untilTime: options.untilTime })];
  } finally {
    log.close();
  }
}

export type OutputFormat = 'table' | 'json' | 'yaml';

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('   ').trimEnd()).join('\n');
}

export function formatGameServers(gameServers: GameServer[], format: OutputFormat): string {
  if (format === 'json') return stringifyJsonExact({ apiVersion: 'v1', kind: 'List', items: gameServers }, 2);
  if (format === 'yaml') return stringify({ apiVersion: 'v1', kind: 'List', items: gameServers });
  if (gameServers.length === 0) return 'No GameServers.';
  const rows = [['NAMESPACE', 'NAME', 'STATE', 'ADDRESS', 'PORT', 'NODE', 'RESOURCEVERSION']];
  for (const gs of gameServers) {
    rows.push([
      gs.metadata.namespace,
      gs.metadata.name,
      gs.status.state,
      gs.status.address,
      gs.status.ports.map((p) => String(p.port)).join(','),
      gs.status.nodeName,
      gs.metadata.resourceVersion,
    ]);
  }
  return table(rows);
}

export function formatEvents(events: StoredEvent[], format: OutputFormat): string {
  if (format === 'json') return stringifyJsonExact(events, 2);
  if (format === 'yaml') return stringify(events);
  if (events.length === 0) return 'No events.';
  const rows = [['SEQ', 'TIME', 'TYPE', 'DETAIL']];
  for (const e of events) rows.push([String(e.seq), new Date(e.time).toISOString(), e.type, describe(e)]);
  return table(rows);
}

function describe(event: StoredEvent): string {
  const p = event.payload as Record<string, unknown>;
  if (event.type === 'GameServerStateChanged') return `-> ${String(p.state)} (${String(p.cause)}: ${String(p.message)})`;
  if (event.type === 'GameServerCreated') {
    const object = p.object as GameServer;
    return `created in ${object.status.state}`;
  }
  return stringifyJsonExact(p);
}
