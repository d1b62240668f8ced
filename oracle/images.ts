import { basename, join } from 'node:path';

/**
 * Which program runs for a container's image: the oracle runs no images, so each image Agones's
 * manifests name maps to a binary built from Agones's source (`build`), found by the image's name
 * without its registry, path and tag. More can be given to `up` as NAME=PATH.
 */

export interface ImageProgram {
  binary: string;
  /** The image's ENTRYPOINT, which a container's `command` may name. */
  entrypoint: string;
  /** The program looks for files beside itself: the container sees the binary at the entrypoint's path, and runs it there. */
  atEntrypoint?: boolean;
}

/** Image name → the binary `build` makes (in the Agones binaries folder) and the image's entrypoint. */
export const AGONES_IMAGES: Record<string, { binary: string; entrypoint: string; atEntrypoint?: boolean }> = {
  // Both default their certificate files to certs/ beside the executable: /certs in the image.
  'agones-controller': { binary: 'controller', entrypoint: '/controller', atEntrypoint: true },
  'agones-extensions': { binary: 'extensions', entrypoint: '/extensions', atEntrypoint: true },
  'agones-allocator': { binary: 'allocator', entrypoint: '/allocator' },
  'agones-sdk': { binary: 'sdk-server', entrypoint: '/sdk-server' },
  'agones-ping': { binary: 'ping', entrypoint: '/ping' },
  'agones-processor': { binary: 'processor', entrypoint: '/processor' },
  'simple-game-server': { binary: 'simple-game-server', entrypoint: '/server' },
  'autoscaler-webhook': { binary: 'autoscaler-webhook', entrypoint: '/server' },
};

export type ImageTable = Record<string, ImageProgram>;

export function imageTable(agonesBin: string, extra: Record<string, string> = {}): ImageTable {
  const table: ImageTable = {};
  for (const [name, image] of Object.entries(AGONES_IMAGES)) table[name] = { ...image, binary: join(agonesBin, image.binary) };
  for (const [name, binary] of Object.entries(extra)) table[name] = { binary, entrypoint: binary };
  return table;
}

/** `us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41` → `simple-game-server`. */
export function imageName(image: string): string {
  const withoutDigest = image.split('@')[0]!;
  const last = withoutDigest.slice(withoutDigest.lastIndexOf('/') + 1);
  return last.includes(':') ? last.slice(0, last.indexOf(':')) : last;
}

/**
 * The program and arguments of a container, as a container runtime composes them: `command`
 * replaces the image's entrypoint (naming the entrypoint, or the binary, runs the built binary),
 * `args` follow it. `mount` is the binary to bind at the entrypoint's path, for the programs that
 * need to be there.
 */
export function programOf(
  container: { image: string; command?: string[]; args?: string[] },
  table: ImageTable,
): { argv: string[]; mount?: { target: string; source: string } } | { error: string } {
  const program = Object.hasOwn(table, imageName(container.image)) ? table[imageName(container.image)] : undefined;
  if (!program) return { error: `image "${container.image}" is not one the oracle can run (known: ${Object.keys(table).join(', ')})` };
  const executable = program.atEntrypoint ? program.entrypoint : program.binary;
  const mount = program.atEntrypoint ? { mount: { target: program.entrypoint, source: program.binary } } : {};
  const command = container.command ?? [];
  if (command.length === 0) return { argv: [executable, ...(container.args ?? [])], ...mount };
  const [first, ...rest] = command;
  const runsImage = first === program.entrypoint || basename(first!) === basename(program.binary) || basename(first!) === basename(program.entrypoint);
  return { argv: [runsImage ? executable : first!, ...rest, ...(container.args ?? [])], ...(runsImage && mount) };
}
