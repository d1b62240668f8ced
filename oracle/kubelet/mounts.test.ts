import { describe, expect, it } from 'vitest';
import { type HostView, mountPlan } from './mounts.js';

/** A machine with /etc/hosts, /home, /run (and /var/run → /run), /usr with /bin → usr/bin, and a file at the top. */
const host: HostView = {
  resolve(path) {
    const real = path.replace(/^\/var\/run(?=\/|$)/, '/run');
    const existing = ['/etc/hosts', '/etc', '/home', '/run', '/usr', '/'].find((p) => real === p || real.startsWith(p === '/' ? '/' : `${p}/`))!;
    return { path: real, existing };
  },
  rootEntries: () => [
    { name: 'bin', type: 'symlink', link: 'usr/bin' },
    { name: 'etc', type: 'dir' },
    { name: 'home', type: 'dir' },
    { name: 'run', type: 'dir' },
    { name: 'usr', type: 'dir' },
    { name: 'info.json', type: 'file' },
  ],
};

describe("a container's mount plan", () => {
  it('binds over a target that exists, and stays in the machine\'s root', () => {
    expect(mountPlan([{ target: '/etc/hosts', source: '/r/hosts', file: true, readOnly: true }], '/s', host)).toEqual({
      root: '/',
      lines: ['mkdir /etc', 'touch /etc/hosts', 'bind /r/hosts /etc/hosts', 'ro /etc/hosts'],
    });
  });

  it('overlays the directory that lacks a target (through symlinks) once, then makes and binds it', () => {
    const plan = mountPlan(
      [
        { target: '/var/run/secrets/kubernetes.io/serviceaccount', source: '/r/token', file: false, readOnly: true },
        { target: '/run/other', source: '/r/other', file: false, readOnly: false },
      ],
      '/s',
      host,
    );
    expect(plan.root).toBe('/');
    expect(plan.lines).toEqual([
      'mkdir /s/upper1',
      'mkdir /s/work1',
      'overlay /run /s/upper1 /s/work1 /run',
      'mkdir /run/secrets/kubernetes.io/serviceaccount',
      'bind /r/token /run/secrets/kubernetes.io/serviceaccount',
      'ro /run/secrets/kubernetes.io/serviceaccount',
      'mkdir /run/other',
      'bind /r/other /run/other',
    ]);
  });

  it('builds a root of its own for a target at the top: every entry of / bound or linked, the ones to add to overlaid', () => {
    const plan = mountPlan(
      [
        { target: '/certs', source: '/r/certs', file: false, readOnly: true },
        { target: '/home/allocator/tls', source: '/r/tls', file: false, readOnly: true },
      ],
      '/s',
      host,
    );
    expect(plan.root).toBe('/s/root');
    expect(plan.lines).toEqual([
      'mkdir /s/root',
      'tmpfs /s/root',
      'symlink usr/bin /s/root/bin',
      'mkdir /s/root/etc',
      'rbind /etc /s/root/etc',
      'mkdir /s/root/home',
      'mkdir /s/upper1',
      'mkdir /s/work1',
      'overlay /home /s/upper1 /s/work1 /s/root/home',
      'mkdir /s/root/run',
      'rbind /run /s/root/run',
      'mkdir /s/root/usr',
      'rbind /usr /s/root/usr',
      'touch /s/root/info.json',
      'bind /info.json /s/root/info.json',
      'mkdir /s/root/certs',
      'bind /r/certs /s/root/certs',
      'ro /s/root/certs',
      'mkdir /s/root/home/allocator/tls',
      'bind /r/tls /s/root/home/allocator/tls',
      'ro /s/root/home/allocator/tls',
    ]);
  });
});
