import { ScenarioError } from './fields.js';
import { type VariantMessage, type VariantOrder, plan, runVariant } from './runs.js';

/**
 * One variant of a `fleetsim simulate` run, in a process of its own (runs.ts forks it): handed the
 * request and the variant's place in it, it plans the same variants the parent did and runs its
 * one, telling its lines, then its result, to the parent.
 */

let finished = false;
// The parent gone (killed, or ended by Ctrl-C) leaves no one to tell: the run stops with it.
process.on('disconnect', () => process.exit(finished ? 0 : 1));

const tell = (message: VariantMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

process.once('message', (message: VariantOrder) => {
  void (async () => {
    try {
      const variant = plan(message.request)[message.index]!;
      const result = await runVariant(variant, message.request.eventLog, (text) => void tell({ type: 'line', text }), message.spareCore);
      await tell({ type: 'done', result });
    } catch (error) {
      await tell({ type: 'failed', message: error instanceof Error ? error.message : String(error), scenario: error instanceof ScenarioError });
    }
    finished = true;
    process.disconnect();
  })();
});
