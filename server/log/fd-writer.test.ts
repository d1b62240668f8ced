import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { FdWriter } from './fd-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-fd-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('FdWriter', () => {
  it('writes every text, in order, off the event loop, and says when all is written', async () => {
    const path = join(dir, 'out.txt');
    const fd = openSync(path, 'w');
    const writer = new FdWriter(fd, () => undefined);
    const texts = Array.from({ length: 2000 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}\n`);
    for (const [i, text] of texts.entries()) {
      writer.write(text);
      if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await writer.written();
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(texts.join(''));
  });

  it('stops writing, without throwing, once a write fails', async () => {
    // A descriptor no process has (EBADF), as a reader that has gone fails a write (EPIPE).
    const writer = new FdWriter(1_000_000_000, () => undefined);
    writer.write('lost\n');
    await writer.written();
    writer.write('ignored\n');
    await writer.written();
  });
});
