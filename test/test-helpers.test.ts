import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp-dir.js';
import { TIME_SCALE_ENV, timeScale } from './helpers/time-scale.js';
import { findTool, onPath, without } from './helpers/tools.js';

/** The helpers that decide how patient the tests are and which programs they find. */

describe('the time scale', () => {
  it('is 1 unless FLEETSIM_TEST_TIME_SCALE sets a number above 0; anything else is an error naming the variable', () => {
    expect(timeScale({})).toBe(1);
    expect(timeScale({ [TIME_SCALE_ENV]: '' })).toBe(1);
    expect(timeScale({ [TIME_SCALE_ENV]: '3' })).toBe(3);
    expect(timeScale({ [TIME_SCALE_ENV]: '0.5' })).toBe(0.5);
    for (const bad of ['0', '-2', 'slow', 'Infinity']) {
      expect(() => timeScale({ [TIME_SCALE_ENV]: bad })).toThrow(`FLEETSIM_TEST_TIME_SCALE: "${bad}" is not a number above 0`);
    }
  });
});

describe('programs the tests drive', () => {
  const saved = process.env.FLEETSIM_TEST_TOOL;
  afterEach(() => {
    if (saved === undefined) delete process.env.FLEETSIM_TEST_TOOL;
    else process.env.FLEETSIM_TEST_TOOL = saved;
  });

  function folders() {
    const dir = tempDir('fleetsim-tools-');
    const [first, second] = [join(dir, 'first'), join(dir, 'second')];
    mkdirSync(first);
    mkdirSync(second);
    writeFileSync(join(first, 'tool'), 'not executable');
    writeFileSync(join(second, 'tool'), '#!/bin/sh\n');
    chmodSync(join(second, 'tool'), 0o755);
    return { first, second };
  }

  it('are looked up on the PATH as a shell does: the first executable file of that name', () => {
    const { first, second } = folders();
    expect(onPath('tool', `${first}:${second}`)).toBe(join(second, 'tool'));
    expect(onPath('tool', first)).toBeUndefined();
    expect(onPath('tool', `${first}:${second}:`)).toBe(join(second, 'tool'));
  });

  it('may be named by a variable; a name that is not an executable file is missing, and the note says so and how to get it', () => {
    const { first, second } = folders();
    process.env.FLEETSIM_TEST_TOOL = join(second, 'tool');
    expect(findTool('FLEETSIM_TEST_TOOL', ['nothing-by-this-name'], 'install it').path).toBe(join(second, 'tool'));
    process.env.FLEETSIM_TEST_TOOL = join(first, 'tool');
    const named = findTool('FLEETSIM_TEST_TOOL', ['nothing-by-this-name'], 'install it');
    expect(named).toEqual({ path: undefined, missing: `FLEETSIM_TEST_TOOL=${join(first, 'tool')} is not an executable file (install it)` });
    delete process.env.FLEETSIM_TEST_TOOL;
    const absent = findTool('FLEETSIM_TEST_TOOL', ['nothing-by-this-name'], 'install it');
    expect(absent.missing).toBe('nothing-by-this-name is not on the PATH (install it, or set FLEETSIM_TEST_TOOL to its path)');
    expect(without({ path: '/bin/sh', missing: 'sh' }, absent)).toEqual([true, absent.missing]);
    expect(without({ path: '/bin/sh', missing: 'sh' })).toEqual([false, '']);
  });
});
