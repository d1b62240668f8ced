import { KUBECTL } from '../../loadtest/remote-fleet.js';
import { runWithInput } from '../../loadtest/run-process.js';

/**
 * One cluster as the user's kubectl sees it through a kubeconfig, in one namespace. The real
 * kubectl is used (the tool a platform team trusts); `KUBECTL` names another binary.
 */

export interface KubectlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What a failed request answered, as the API server's Status says it (messages are not compared). */
export interface ApiError {
  code?: number;
  reason: string;
  /** Validation causes: the field at fault and why, sorted. */
  causes?: { field: string; reason: string }[];
  /** Only when no Status could be read: kubectl's own last line. */
  message?: string;
}

export class KubectlCluster {
  constructor(
    readonly label: string,
    private readonly kubeconfig: string,
    private readonly namespace: string,
  ) {}

  async run(args: readonly string[], stdin = '', timeoutMs = 60_000): Promise<KubectlRun> {
    try {
      return await runWithInput(KUBECTL, ['--kubeconfig', this.kubeconfig, '--namespace', this.namespace, ...args], stdin, timeoutMs);
    } catch (error) {
      throw new Error(`cannot run kubectl (${KUBECTL}; KUBECTL names another): ${(error as Error).message}`);
    }
  }

  /**
   * Runs kubectl with `-v=9`, which logs each response body in full, so a failure's Status (reason, code,
   * causes) is read exactly rather than from kubectl's wording.
   */
  async request(args: readonly string[], stdin = ''): Promise<{ ok: true; stdout: string } | { ok: false; error: ApiError }> {
    const run = await this.run([...args, '-v=9'], stdin);
    if (run.code === 0) return { ok: true, stdout: run.stdout };
    return { ok: false, error: statusOf(run.stderr) };
  }
}

/**
 * A response body as kubectl's -v=9 log (klog) writes it: quoted on one line (`body="…"`) when it
 * has no newline, as `fleetsim serve` answers; else `body=<`, each line of it tab-indented, then
 * ` >`, as a real API server's reply (which ends with a newline) is logged; or `Response Body: {…}`
 * in older kubectl.
 */
const BODY = /"Response Body" body="((?:[^"\\]|\\.)*)"|"Response Body" body=<\n((?:\t.*\n?)*?) >$|Response Body: (\{.*\})$/gm;

/** The last failure Status among the response bodies kubectl logged, or what its last line says. */
export function statusOf(stderr: string): ApiError {
  let found: ApiError | undefined;
  for (const match of stderr.matchAll(BODY)) {
    const body =
      match[1] !== undefined
        ? unquote(match[1])
        : match[2] !== undefined
          ? match[2]
              .split('\n')
              .map((line) => line.replace(/^\t/, ''))
              .join('\n')
          : match[3];
    const status = parseStatus(body);
    if (status) found = status;
  }
  if (found) return found;
  const lines = stderr.split('\n').filter((line) => line.trim() !== '' && !/^[IWE]\d{4} /.test(line) && !/^\t/.test(line) && line !== ' >');
  const last = lines.at(-1)?.trim() ?? 'kubectl failed without a message';
  const reason = /^Error from server \((\w+)\)/.exec(last)?.[1] ?? (/ is invalid: /.test(last) ? 'Invalid' : 'ClientError');
  return { reason, message: last };
}

function unquote(goQuoted: string): string | undefined {
  try {
    return JSON.parse(`"${goQuoted}"`) as string;
  } catch {
    return undefined; // a truncated or Go-only escape: not a body we can read
  }
}

function parseStatus(body: string | undefined): ApiError | undefined {
  if (body === undefined) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  const status = doc as { kind?: unknown; status?: unknown; reason?: unknown; code?: unknown; details?: { causes?: { field?: unknown; reason?: unknown }[] } };
  if (status?.kind !== 'Status' || status.status !== 'Failure') return undefined;
  const causes = (status.details?.causes ?? [])
    .map((cause) => ({ field: String(cause.field ?? ''), reason: String(cause.reason ?? '') }))
    .sort((a, b) => a.field.localeCompare(b.field) || a.reason.localeCompare(b.reason));
  return {
    reason: typeof status.reason === 'string' && status.reason !== '' ? status.reason : 'Unknown',
    ...(typeof status.code === 'number' && { code: status.code }),
    ...(causes.length > 0 && { causes }),
  };
}
