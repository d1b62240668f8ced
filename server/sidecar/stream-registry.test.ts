import { describe, expect, it } from 'vitest';
import { StreamRegistry } from './stream-registry.js';

describe('StreamRegistry', () => {
  it('ends every open stream once and forgets those that left on their own', () => {
    const streams = new StreamRegistry();
    const ended: string[] = [];
    streams.add(() => ended.push('a'));
    const leave = streams.add(() => ended.push('b'));
    // An end that unregisters itself, as the surfaces' ends do.
    const selfLeaving = streams.add(() => {
      selfLeaving();
      ended.push('c');
    });
    leave();
    expect(streams.size).toBe(2);
    streams.endAll();
    expect(ended).toEqual(['a', 'c']);
    expect(streams.size).toBe(0);
    streams.endAll();
    expect(ended).toEqual(['a', 'c']);
  });
});
