import { lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join, posix, sep } from 'node:path';

/**
 * How a container's files are put in place: a plan of mounts that launch.sh carries out in the
 * container's own mount namespace (made by `ip netns exec`), so the machine's files are never
 * changed. A mount whose target exists is bound over it. A target under a directory that exists
 * but lacks it (/var/run/secrets/… under /run) gets that directory overlaid, privately writable,
 * first. A target at the top (/certs, /logs, which Agones's images expect) needs a root of its own:
 * a tmpfs that binds every top-level entry of the machine's root, entered with chroot.
 */

export interface PlannedMount {
  /** Where the container sees it. */
  target: string;
  /** What it is on the machine: a directory, or a file when `file`. */
  source: string;
  file: boolean;
  readOnly: boolean;
}

export interface RootEntry {
  name: string;
  type: 'dir' | 'file' | 'symlink';
  link?: string;
}

/** What the plan needs to know of the machine's file system. */
export interface HostView {
  /** The path with the symlinks of its existing part resolved, and the longest prefix of that which exists. */
  resolve(path: string): { path: string; existing: string };
  rootEntries(): RootEntry[];
}

export interface MountPlan {
  /** The container's root: `/`, or the staged root it is chrooted into. */
  root: string;
  /** launch.sh's operations, one a line. */
  lines: string[];
}

export function mountPlan(mounts: readonly PlannedMount[], stage: string, host: HostView): MountPlan {
  const resolved = mounts.map((mount) => ({ ...mount, ...host.resolve(mount.target) }));
  const incomplete = resolved.filter((mount) => mount.existing !== mount.path);
  const lines: string[] = [];
  let overlays = 0;
  const overlay = (lower: string, at: string) => {
    overlays++;
    const upper = `${stage}/upper${overlays}`;
    const work = `${stage}/work${overlays}`;
    lines.push(`mkdir ${upper}`, `mkdir ${work}`, `overlay ${lower} ${upper} ${work} ${at}`);
  };
  let root = '/';
  if (incomplete.some((mount) => mount.existing === '/')) {
    root = `${stage}/root`;
    const overlaid = new Set(incomplete.filter((mount) => mount.existing !== '/').map((mount) => mount.existing.split('/')[1]!));
    lines.push(`mkdir ${root}`, `tmpfs ${root}`);
    for (const entry of host.rootEntries()) {
      const at = `${root}/${entry.name}`;
      if (entry.type === 'symlink') lines.push(`symlink ${entry.link} ${at}`);
      else if (entry.type === 'file') lines.push(`touch ${at}`, `bind /${entry.name} ${at}`);
      else {
        lines.push(`mkdir ${at}`);
        if (overlaid.has(entry.name)) overlay(`/${entry.name}`, at);
        else lines.push(`rbind /${entry.name} ${at}`);
      }
    }
  } else {
    // Overlay each directory that lacks a target once; one above another covers it.
    const lowers = [...new Set(incomplete.map((mount) => mount.existing))].sort((a, b) => a.length - b.length);
    const kept: string[] = [];
    for (const lower of lowers) if (!kept.some((above) => lower.startsWith(`${above}/`))) kept.push(lower);
    for (const lower of kept) overlay(lower, lower);
  }
  for (const mount of resolved) {
    const at = root === '/' ? mount.path : `${root}${mount.path}`;
    if (mount.file) lines.push(`mkdir ${posix.dirname(at)}`, `touch ${at}`);
    else lines.push(`mkdir ${at}`);
    lines.push(`bind ${mount.source} ${at}`);
    if (mount.readOnly) lines.push(`ro ${at}`);
  }
  return { root, lines };
}

/** The machine's file system as it is. */
export const hostView: HostView = {
  resolve(path: string) {
    let existing = '/';
    const parts = path.split('/').filter((part) => part !== '');
    let index = 0;
    for (; index < parts.length; index++) {
      const next = join(existing, parts[index]!);
      try {
        lstatSync(next);
      } catch {
        break;
      }
      existing = realpathSync(next);
    }
    const rest = parts.slice(index);
    return { path: rest.length === 0 ? existing : join(existing, ...rest).split(sep).join('/'), existing };
  },
  rootEntries() {
    return readdirSync('/', { withFileTypes: true })
      .filter((entry) => !/\s/.test(entry.name))
      .map((entry): RootEntry => {
        if (entry.isSymbolicLink()) return { name: entry.name, type: 'symlink', link: readlinkSync(`/${entry.name}`) };
        return { name: entry.name, type: entry.isDirectory() ? 'dir' : 'file' };
      });
  },
};
