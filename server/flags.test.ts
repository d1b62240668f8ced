import { describe, expect, it } from 'vitest';
import { FlagError, type FlagSpec, closest, parseDuration, parseFlags } from './flags.js';

describe('parseDuration (Go durations, as Kubernetes flags take them)', () => {
  it('reads hours, minutes, seconds, milliseconds and their sums', () => {
    expect(parseDuration('1h', '--x')).toBe(3_600_000);
    expect(parseDuration('1h30m', '--x')).toBe(5_400_000);
    expect(parseDuration('90s', '--x')).toBe(90_000);
    expect(parseDuration('1.5m', '--x')).toBe(90_000);
    expect(parseDuration('250ms', '--x')).toBe(250);
    expect(parseDuration('0s', '--x')).toBe(0);
  });

  it('refuses anything else, naming the flag', () => {
    for (const text of ['', '1', 'h', '1d', '1h ', 'an hour', '-1h']) {
      expect(() => parseDuration(text, '--event-ttl'), text).toThrow(FlagError);
      expect(() => parseDuration(text, '--event-ttl'), text).toThrow(`--event-ttl: "${text}" is not a duration`);
    }
  });
});

describe('parseFlags', () => {
  it('tells which flags were given, on the command line or by their variable, from those left to their default', () => {
    const specs: FlagSpec[] = [
      { name: 'nodes', env: 'NODES', type: 'number', default: 4, help: '' },
      { name: 'max-pods', type: 'number', default: 110, help: '' },
      { name: 'pools', type: 'string', help: '' },
    ];
    const { values, given } = parseFlags(['--pools', 'p.yaml'], specs, { NODES: '3' });
    expect(values).toEqual({ nodes: 3, 'max-pods': 110, pools: 'p.yaml' });
    expect([...given].sort()).toEqual(['nodes', 'pools']);
  });
});

describe('one-letter aliases', () => {
  const specs: FlagSpec[] = [
    { name: 'port', alias: 'p', type: 'number', default: 8080, help: '' },
    { name: 'fresh', type: 'boolean', default: false, help: '' },
    { name: 'help', alias: 'h', type: 'boolean', default: false, help: '' },
  ];

  it('take their value after a space, an = or nothing, and go together behind one dash, as pflag reads them', () => {
    for (const argv of [['-p', '9'], ['-p=9'], ['-p9'], ['-hp', '9']]) expect(parseFlags(argv, specs, {}).values.port, argv.join(' ')).toBe(9);
    expect(parseFlags(['-hp', '9'], specs, {}).values.help).toBe(true);
  });

  it('are not long names: a long name behind one dash is refused, not read as aliases and their value', () => {
    expect(() => parseFlags(['-port', '9'], specs, {})).toThrow(new FlagError('unknown flag -port (did you mean --port?)'));
    expect(() => parseFlags(['-fresh'], specs, {})).toThrow(new FlagError('unknown flag -fresh (did you mean --fresh?)'));
  });

  it('end at --: what follows is positional', () => {
    expect(parseFlags(['--', '--port'], specs, {}).positional).toEqual(['--port']);
  });
});

describe('an unknown flag', () => {
  const specs: FlagSpec[] = [
    { name: 'port', alias: 'p', type: 'number', default: 8080, help: '' },
    { name: 'node-pools', type: 'string', help: '' },
    { name: 'nodes', type: 'number', help: '' },
  ];

  it('is named, with the flag it most likely meant', () => {
    expect(() => parseFlags(['--prot', '1'], specs, {})).toThrow(new FlagError('unknown flag --prot (did you mean --port?)'));
    expect(() => parseFlags(['--node-pool=x.yaml'], specs, {})).toThrow(new FlagError('unknown flag --node-pool (did you mean --node-pools?)'));
    expect(() => parseFlags(['--nodse', '3'], specs, {})).toThrow(new FlagError('unknown flag --nodse (did you mean --nodes?)'));
  });

  it('points to --help when nothing is near', () => {
    expect(() => parseFlags(['--colour'], specs, {})).toThrow(new FlagError('unknown flag --colour (--help lists the flags)'));
  });
});

describe('closest', () => {
  it('takes the nearest name within a third of its length (two edits at least), or one the name begins', () => {
    const commands = ['serve', 'sidecar', 'replay', 'explain', 'simulate', 'report'];
    expect(closest('serv', commands)).toBe('serve');
    expect(closest('sidcar', commands)).toBe('sidecar');
    expect(closest('simul', commands)).toBe('simulate');
    expect(closest('repaly', commands)).toBe('replay');
    expect(closest('frobnicate', commands)).toBeUndefined();
    expect(closest('x', commands)).toBeUndefined();
  });
});
