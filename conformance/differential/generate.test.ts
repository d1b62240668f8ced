import { describe, expect, it } from 'vitest';
import { type Operation, generateSequence, sequenceName, sequenceScenario } from './generate.js';

const options = { length: 12, countsAndLists: true };
const RUN = 'df1a2b3c';

describe('the differential generator', () => {
  it('gives the same sequence for the same seed and index, and another for another seed or index', () => {
    const a = generateSequence(7, 3, options);
    expect(generateSequence(7, 3, options)).toEqual(a);
    expect(JSON.stringify(generateSequence(8, 3, options).operations)).not.toBe(JSON.stringify(a.operations));
    expect(JSON.stringify(generateSequence(7, 4, options).operations)).not.toBe(JSON.stringify(a.operations));
    expect(sequenceName(a)).toBe('s7-3');
  });

  it('writes every sequence as a valid cluster scenario touching only its run', () => {
    for (let index = 0; index < 40; index++) {
      const sequence = generateSequence(11, index, options);
      expect(sequence.operations).toHaveLength(12);
      // parseScenario refuses unknown actions, duplicate step names, objects outside the run and
      // reads or sends naming an allocate step that is not earlier.
      const scenario = sequenceScenario(sequenceName(sequence), sequence.operations, RUN);
      expect(scenario.steps.every((step) => step.name.startsWith('o'))).toBe(true);
      expect(JSON.stringify(scenario.steps)).not.toContain('${run}');
    }
  });

  it('starts by making something, and names only operations before it as what it needs', () => {
    const kinds = new Set<string>();
    for (let index = 0; index < 60; index++) {
      const { operations } = generateSequence(5, index, options);
      expect(['create-fleet', 'create-gameserver']).toContain(operations[0]!.kind);
      operations.forEach((operation: Operation, at) => {
        const earlier = new Set(operations.slice(0, at).map((o) => o.id));
        for (const need of operation.needs) expect(earlier.has(need), `${operation.id} needs ${need}`).toBe(true);
        kinds.add(operation.kind);
        // Each operation is followed by the settled reads of what it may have changed.
        expect(operation.steps.slice(1).every((step) => 'wait' in step && 'settle' in step)).toBe(true);
      });
    }
    expect([...kinds].sort()).toEqual([
      'allocate',
      'create-autoscaler',
      'create-fleet',
      'create-gameserver',
      'delete-autoscaler',
      'delete-fleet',
      'delete-gameserver',
      'patch-autoscaler',
      'patch-fleet',
      'scale-fleet',
      'sdk',
    ]);
  });

  it('uses no counters or lists when the gate is off', () => {
    for (let index = 0; index < 30; index++) {
      const text = JSON.stringify(generateSequence(3, index, { length: 12, countsAndLists: false }).operations);
      expect(/counters|lists|_COUNTER|_LIST/.exec(text)?.[0]).toBeUndefined();
    }
  });
});
