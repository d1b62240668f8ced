import { type Stats, closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Files a user names — a flag's (`-f`, `--profiles`, `--node-pools`, the sidecar's `-f`, TLS
 * material), a scenario's and the files it names — are read through here: regular files only, of
 * a bounded size. A device such as /dev/zero never ends (reading it whole aborted the process), a
 * FIFO blocks until someone writes, and configuration is small.
 */

/** The most a file of configuration (YAML, JSON, PEM) may hold. */
export const MAX_INPUT_FILE_BYTES = 1024 * 1024;

/** A file fleetsim will not read: not a regular file, or larger than its reader takes. Its message names no path: the reader adds it. */
export class InputFileError extends Error {
  override readonly name = 'InputFileError';
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isFIFO()) return 'a pipe';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}

/** `512 bytes`, `1 MiB`, `2.5 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [size, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / (1024 * 1024), 'MiB'];
  return `${Number(size.toFixed(1))} ${unit}`;
}

/**
 * The text (UTF-8) of the file at `path`: a regular file of at most `maxBytes`. Opened without
 * blocking (a FIFO is refused, not waited on) and read no further than `maxBytes`, even if it grows
 * meanwhile. Errors of the file system itself (ENOENT, EACCES) are thrown as they come.
 */
export function readInputFile(path: string, maxBytes = MAX_INPUT_FILE_BYTES): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new InputFileError(`not a regular file (${kindOf(stat)})`);
    const limit = `the ${formatBytes(maxBytes)} fleetsim reads from such a file`;
    if (stat.size > maxBytes) throw new InputFileError(`${formatBytes(stat.size)}: more than ${limit}`);
    // One byte more than allowed, at most: a file that grew past the limit since fstat is refused too.
    let buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) throw new InputFileError(`grew past ${limit} while it was read`);
        const larger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** Why a file could not be read, briefly: the file system's code (ENOENT, EACCES) or what readInputFile refused. */
export function whyUnreadable(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
