import {
  type AllocatorModel,
  type AllocatorOptions,
  DEFAULT_ALLOCATOR_REPLICAS,
  DEFAULT_BATCH_WAIT_MS,
  DEFAULT_INFORMER_LAG_MS,
  MAX_ALLOCATOR_REPLICAS,
} from './allocator.js';
import { FlagError, type FlagSpec, type FlagValues, parseDuration } from '../flags.js';

/** The flags of `--allocator-model agones-batch`: how the real allocator it models is deployed. */
export const ALLOCATOR_MODEL_FLAGS: FlagSpec[] = [
  {
    name: 'allocator-replicas',
    type: 'number',
    default: DEFAULT_ALLOCATOR_REPLICAS,
    help: 'agones-batch: allocator pods, each with its own cache and batch loop (Agones installs 3)',
  },
  {
    name: 'allocator-batch-wait',
    type: 'string',
    default: `${DEFAULT_BATCH_WAIT_MS}ms`,
    help: "agones-batch: how long a replica's batch loop sleeps when idle (Agones's allocationBatchWaitTime)",
  },
  {
    name: 'allocator-informer-lag',
    type: 'string',
    default: `${DEFAULT_INFORMER_LAG_MS}ms`,
    help: "agones-batch: how late each replica's cache hears of a GameServer change (its watch's delay)",
  },
];

/** `--allocator-model`'s value, checked. */
export function parseAllocatorModel(value: unknown): AllocatorModel {
  if (value === 'exact' || value === 'agones-batch') return value;
  throw new FlagError(`--allocator-model must be exact or agones-batch, not "${String(value)}"`);
}

/** The flags of `fleetsim serve` that ask for these options (a harness starting a server). */
export function allocatorModelArguments(options: AllocatorOptions): string[] {
  const args = ['--allocator-model', options.model ?? 'exact'];
  if (options.model !== 'agones-batch') return args;
  if (options.replicas !== undefined) args.push('--allocator-replicas', String(options.replicas));
  if (options.batchWaitMs !== undefined) args.push('--allocator-batch-wait', `${options.batchWaitMs}ms`);
  if (options.informerLagMs !== undefined) args.push('--allocator-informer-lag', `${options.informerLagMs}ms`);
  return args;
}

/** The options in words, for a report. */
export function describeAllocatorModel(options: AllocatorOptions): string {
  if (options.model !== 'agones-batch') return options.model ?? 'exact';
  return `agones-batch (${options.replicas ?? DEFAULT_ALLOCATOR_REPLICAS} replicas, batch wait ${options.batchWaitMs ?? DEFAULT_BATCH_WAIT_MS} ms, informer lag ${options.informerLagMs ?? DEFAULT_INFORMER_LAG_MS} ms)`;
}

/** The model's options from its flags; a flag of agones-batch given with another model is refused. */
export function allocatorModelOptions(model: AllocatorModel, values: FlagValues, given: ReadonlySet<string>): AllocatorOptions {
  if (model !== 'agones-batch') {
    const stray = ALLOCATOR_MODEL_FLAGS.find((flag) => given.has(flag.name));
    if (stray) throw new FlagError(`--${stray.name} goes with --allocator-model agones-batch (the ${model} model has no replicas, batches or caches)`);
    return { model };
  }
  const replicas = Number(values['allocator-replicas']);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_ALLOCATOR_REPLICAS) {
    throw new FlagError(`--allocator-replicas must be a whole number from 1 to ${MAX_ALLOCATOR_REPLICAS}, not ${String(values['allocator-replicas'])}`);
  }
  const batchWaitMs = parseDuration(String(values['allocator-batch-wait']), '--allocator-batch-wait');
  if (batchWaitMs <= 0) throw new FlagError('--allocator-batch-wait must be longer than 0');
  const informerLagMs = parseDuration(String(values['allocator-informer-lag']), '--allocator-informer-lag');
  return { model, replicas, batchWaitMs, informerLagMs };
}
