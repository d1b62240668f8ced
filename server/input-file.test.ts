import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputFileError, MAX_INPUT_FILE_BYTES, formatBytes, readInputFile } from './input-file.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readInputFile', () => {
  it('reads a regular file whole, up to the limit', () => {
    const file = join(dir, 'fleet.yaml');
    writeFileSync(file, 'kind: Fleet\n');
    expect(readInputFile(file)).toBe('kind: Fleet\n');
    const full = join(dir, 'full.txt');
    writeFileSync(full, 'x'.repeat(MAX_INPUT_FILE_BYTES));
    expect(readInputFile(full)).toHaveLength(MAX_INPUT_FILE_BYTES);
  });

  it('refuses a file larger than the limit, saying how large', () => {
    const file = join(dir, 'large.txt');
    writeFileSync(file, 'x'.repeat(3000));
    expect(() => readInputFile(file, 2048)).toThrow(new InputFileError('2.9 KiB: more than the 2 KiB fleetsim reads from such a file'));
  });

  it('refuses a device, a directory and a pipe without reading or waiting', () => {
    expect(() => readInputFile('/dev/zero')).toThrow(new InputFileError('not a regular file (a character device)'));
    expect(() => readInputFile(dir)).toThrow(new InputFileError('not a regular file (a directory)'));
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => readInputFile(fifo)).toThrow(new InputFileError('not a regular file (a pipe)'));
  });

  it('lets the file system say what is missing', () => {
    expect(() => readInputFile(join(dir, 'missing.yaml'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('formats sizes for people', () => {
    expect([100, 2048, 1536, 1024 * 1024, 5.5 * 1024 * 1024].map(formatBytes)).toEqual(['100 bytes', '2 KiB', '1.5 KiB', '1 MiB', '5.5 MiB']);
  });
});
