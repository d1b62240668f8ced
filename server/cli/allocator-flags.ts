import { DEFAULT_ALLOCATOR_TLS_PORT, readAllocatorTls } from '../api/allocator/allocator-tls.js';
import type { AllocatorModel } from '../allocation/allocator.js';
import type { AllocatorTlsOptions } from '../allocator-service.js';
import { parseAllocatorModel } from '../allocation/allocator-model-flags.js';
import { FlagError, type FlagSpec, type FlagValues } from '../flags.js';

/** The allocator service's flags of `fleetsim serve`: its model and its own TLS listener. */
export const ALLOCATOR_FLAGS: FlagSpec[] = [
  { name: 'allocator-model', type: 'string', default: 'exact', help: "exact, or agones-batch (the real allocator: replicas with lagging caches, batches, update conflicts)" },
  {
    name: 'allocator-tls',
    type: 'string',
    help: 'auto: serve the allocator over mutual TLS on --allocator-port with certificates made at first start and kept in the log (the Secrets of agones-system, as Agones installs them)',
  },
  { name: 'allocator-tls-cert', type: 'string', help: 'PEM certificate: also serve the allocator (REST POST /gameserverallocation and gRPC Allocate) over TLS on --allocator-port' },
  { name: 'allocator-tls-key', type: 'string', help: 'PEM private key of --allocator-tls-cert' },
  { name: 'allocator-client-ca', type: 'string', help: 'PEM CA bundle: require client certificates it signed (mutual TLS)' },
  { name: 'allocator-port', type: 'number', default: DEFAULT_ALLOCATOR_TLS_PORT, help: 'TLS port of the allocator, REST and gRPC (with --allocator-tls-cert or --allocator-tls auto; 0: any free port)' },
  {
    name: 'allocator-plain-allowed',
    type: 'boolean',
    default: false,
    help: 'with --allocator-client-ca, still allocate without a certificate on --port (refused by default)',
  },
];

export interface AllocatorFlags {
  model: AllocatorModel;
  tls: AllocatorTlsOptions | undefined;
  /** The file of `--allocator-client-ca`, named when the listener starts. */
  clientCaFile: string | undefined;
}

/** Checks the allocator's flags together and reads the TLS files they name. */
export function allocatorFlags(values: FlagValues): AllocatorFlags {
  const model = parseAllocatorModel(values['allocator-model']);
  const tlsCert = values['allocator-tls-cert'] ? String(values['allocator-tls-cert']) : undefined;
  const tlsKey = values['allocator-tls-key'] ? String(values['allocator-tls-key']) : undefined;
  const clientCa = values['allocator-client-ca'] ? String(values['allocator-client-ca']) : undefined;
  const auto = values['allocator-tls'] !== undefined;
  if (auto && String(values['allocator-tls']) !== 'auto') throw new FlagError(`--allocator-tls must be auto, not "${String(values['allocator-tls'])}"`);
  if (auto && (tlsCert !== undefined || tlsKey !== undefined || clientCa !== undefined)) {
    throw new FlagError('--allocator-tls auto makes its own certificates: give it without --allocator-tls-cert, --allocator-tls-key and --allocator-client-ca');
  }
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new FlagError('--allocator-tls-cert and --allocator-tls-key go together');
  if (clientCa !== undefined && tlsCert === undefined) throw new FlagError('--allocator-client-ca needs --allocator-tls-cert and --allocator-tls-key');
  const plainAllowed = Boolean(values['allocator-plain-allowed']);
  if (plainAllowed && clientCa === undefined && !auto) {
    throw new FlagError('--allocator-plain-allowed goes with --allocator-client-ca (without client certificates, allocation is served on --port anyway)');
  }
  const allocatorPort = Number(values['allocator-port']);
  if (!Number.isInteger(allocatorPort) || allocatorPort < 0 || allocatorPort > 65535) throw new FlagError('--allocator-port must be a port number');
  let tls: AllocatorTlsOptions | undefined = auto ? { material: 'auto', port: allocatorPort, plainAllowed } : undefined;
  if (tlsCert !== undefined && tlsKey !== undefined) {
    try {
      tls = { material: readAllocatorTls({ certFile: tlsCert, keyFile: tlsKey, clientCaFile: clientCa }), port: allocatorPort, plainAllowed };
    } catch (error) {
      throw new FlagError((error as Error).message);
    }
  }
  return { model, tls, clientCaFile: clientCa };
}

/** The line `fleetsim serve` prints when the allocator's TLS listener is up. */
export function allocatorServingLine(flags: AllocatorFlags, host: string, tlsPort: number): string {
  const mode =
    flags.tls?.material === 'auto'
      ? 'mutual TLS, certificates in the Secrets of agones-system'
      : flags.clientCaFile
        ? `mutual TLS, client CA ${flags.clientCaFile}`
        : 'TLS, no client certificates';
  return `fleetsim allocator serving on https://${host}:${tlsPort}/gameserverallocation (${mode})`;
}
