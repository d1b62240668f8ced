import { describe, expect, it } from 'vitest';
import { Logger, formatLogLine, parseLogLevel } from './logger.js';

const T = Date.parse('2026-01-02T03:04:05.678Z');

describe('Logger', () => {
  it('builds nothing for a line below its level', () => {
    const written: string[] = [];
    const log = new Logger({ level: 'warn', format: 'text' }, () => T, (text) => written.push(text));
    let described = 0;
    log.later('info', () => ((described += 1), { msg: 'no' }), undefined);
    log.info('no');
    log.warn('yes', { n: 1 });
    expect(described).toBe(0);
    expect(written).toEqual(['2026-01-02T03:04:05.678Z warn  yes n=1\n']);
  });

  it('batched, makes its lines and writes them once, after the turn', async () => {
    const writes: string[] = [];
    let now = T;
    const log = new Logger({ level: 'debug', format: 'text' }, () => now, (text) => writes.push(text), { batched: true });
    const subject = { name: 'first' };
    log.later('info', (s: { name: string }) => ({ msg: `made from ${s.name}` }), subject);
    subject.name = 'changed before the write';
    now += 1;
    log.debug('second');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([
      '2026-01-02T03:04:05.678Z info  made from changed before the write\n2026-01-02T03:04:05.679Z debug second\n',
    ]);
  });

  it('held, keeps its lines until released, then writes them after the turn', async () => {
    const writes: string[] = [];
    const log = new Logger({ level: 'info', format: 'text' }, () => T, (text) => writes.push(text), { batched: true });
    log.hold();
    log.info('during the start');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([]);
    log.release();
    writes.push('the banner, printed in the same turn\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['the banner, printed in the same turn\n', '2026-01-02T03:04:05.678Z info  during the start\n']);
  });

  it('writes a line that could not be made as an error, and the others', () => {
    const written: string[] = [];
    const log = new Logger({ level: 'info', format: 'text' }, () => T, (text) => written.push(text));
    log.later('info', () => {
      throw new Error('broken');
    }, undefined);
    log.info('fine');
    expect(written).toEqual(['2026-01-02T03:04:05.678Z error a log line could not be made error=broken\n', '2026-01-02T03:04:05.678Z info  fine\n']);
  });
});

describe('formatLogLine', () => {
  it('text: fields as key=value, quoted when a value has spaces, quotes or =, undefined ones left out', () => {
    const line = formatLogLine('text', '2026-01-02T03:04:05.678Z', 'info', {
      msg: 'GameServer default/a: Scheduled → Ready',
      fields: { fleet: 'f', message: 'SDK.Ready() complete', selector: 'a=b', empty: '', none: undefined, n: 3, big: 2n ** 63n - 1n, ok: true },
    });
    expect(line).toBe(
      '2026-01-02T03:04:05.678Z info  GameServer default/a: Scheduled → Ready fleet=f message="SDK.Ready() complete" selector="a=b" empty="" n=3 big=9223372036854775807 ok=true\n',
    );
  });

  it('json: one object, time, level and msg first, 64-bit integers exact, no field overriding them', () => {
    const line = formatLogLine('json', '2026-01-02T03:04:05.678Z', 'warn', { msg: 'm', fields: { msg: 'not this', count: 2n ** 63n - 1n, none: undefined } });
    expect(line).toBe('{"time":"2026-01-02T03:04:05.678Z","level":"warn","msg":"m","count":9223372036854775807}\n');
  });
});

describe('parseLogLevel', () => {
  it("takes fleetsim's levels and the names Agones's logrus takes, in any case", () => {
    expect(['debug', 'Info', 'WARN', 'error', 'warning', 'trace', 'fatal', 'panic'].map(parseLogLevel)).toEqual([
      'debug',
      'info',
      'warn',
      'error',
      'warn',
      'debug',
      'error',
      'error',
    ]);
    expect(parseLogLevel('loud')).toBeUndefined();
  });
});
