import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Api, type KubeObject } from '../api.js';
import { fieldValue } from './downward.js';
import { type KeyToPath, type Pod, type Volume } from './pod.js';

/**
 * A pod's volumes as directories of the pod's folder, made before its containers start:
 * emptyDir, secret, configMap, downwardAPI, projected (service-account tokens, requested with the
 * TokenRequest API and renewed at 80% of their life, as the kubelet does) and hostPath. A Secret
 * or ConfigMap that changes later is written again into the volumes that show it (`refresh`), as
 * the kubelet does: programs that watch their certificates (Agones's allocator) see the new ones.
 * A file mounted by subPath keeps its first content, as under the kubelet.
 */

export class VolumeError extends Error {}

export type SourcePlural = 'secrets' | 'configmaps';

interface DataSource {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

/** A Secret or ConfigMap as the API server serves it. */
export type SourceObject = KubeObject & DataSource;

/** A Secret or ConfigMap shown in a volume's directory, and the files it put there. */
interface ShownSource {
  plural: SourcePlural;
  name: string;
  dir: string;
  items: KeyToPath[] | undefined;
  mode: number;
  files: string[];
}

export class PodVolumes {
  /** Where each volume is on the machine, by name. */
  readonly paths = new Map<string, string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly shown: ShownSource[] = [];

  constructor(
    private readonly api: Api,
    private readonly pod: Pod,
    private readonly dir: string,
    private readonly addresses: { podIP: string; hostIP: string },
    private readonly log: (line: string) => void,
  ) {}

  /** Makes every volume; throws VolumeError (the pod waits and tries again) when a source is missing. */
  async prepare(): Promise<void> {
    for (const volume of this.pod.spec.volumes ?? []) {
      if (this.paths.has(volume.name)) continue;
      if (volume.hostPath) {
        this.paths.set(volume.name, volume.hostPath.path);
        continue;
      }
      const path = join(this.dir, volume.name);
      mkdirSync(path, { recursive: true });
      await this.fill(volume, path);
      this.paths.set(volume.name, path);
    }
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.shown.length = 0;
  }

  /**
   * A Secret or ConfigMap of the cluster is now `object`: the volumes that show it get its keys
   * again, files whose content changed are replaced (each atomically), those of keys it no longer
   * has are removed. A key named in `items` that is gone leaves the volume as it was.
   */
  refresh(plural: SourcePlural, object: SourceObject): void {
    if ((object.metadata.namespace ?? 'default') !== (this.pod.metadata.namespace ?? 'default')) return;
    for (const shown of this.shown) {
      if (shown.plural !== plural || shown.name !== object.metadata.name) continue;
      try {
        const files = writeKeys(shown.dir, object, shown.items, shown.mode, plural === 'secrets');
        for (const file of shown.files) if (!files.includes(file)) rmSync(join(shown.dir, file), { force: true });
        shown.files = files;
      } catch (error) {
        this.log(`${this.pod.metadata.namespace}/${this.pod.metadata.name}: updating ${plural} ${object.metadata.name}: ${(error as Error).message}`);
      }
    }
  }

  private async fill(volume: Volume, path: string): Promise<void> {
    if (volume.secret) {
      await this.show(path, { plural: 'secrets', name: volume.secret.secretName, items: volume.secret.items, optional: volume.secret.optional }, volume.secret.defaultMode ?? 0o644);
    } else if (volume.configMap) {
      await this.show(path, { plural: 'configmaps', ...volume.configMap }, volume.configMap.defaultMode ?? 0o644);
    } else if (volume.downwardAPI) {
      for (const item of volume.downwardAPI.items) this.writeField(path, item.path, item.fieldRef?.fieldPath, item.mode ?? volume.downwardAPI.defaultMode ?? 0o644);
    } else if (volume.projected) {
      const mode = volume.projected.defaultMode ?? 0o644;
      for (const source of volume.projected.sources) {
        if (source.serviceAccountToken) await this.writeToken(path, source.serviceAccountToken, mode);
        else if (source.configMap) await this.show(path, { plural: 'configmaps', ...source.configMap }, mode);
        else if (source.secret) await this.show(path, { plural: 'secrets', ...source.secret }, mode);
        else if (source.downwardAPI) for (const item of source.downwardAPI.items) this.writeField(path, item.path, item.fieldRef?.fieldPath, item.mode ?? mode);
      }
    }
    // emptyDir (and any kind not named above) is the empty directory itself.
  }

  /** Writes a Secret's or ConfigMap's keys into `dir`, and remembers them for `refresh`. */
  private async show(dir: string, source: { plural: SourcePlural; name: string; items?: KeyToPath[]; optional?: boolean }, mode: number): Promise<void> {
    const namespace = this.pod.metadata.namespace ?? 'default';
    const found = await this.api.find<DataSource>(`/api/v1/namespaces/${namespace}/${source.plural}/${source.name}`);
    if (!found && !source.optional) throw new VolumeError(`${source.plural === 'secrets' ? 'secret' : 'configmap'} "${source.name}" not found`);
    const files = writeKeys(dir, found ?? {}, source.items, mode, source.plural === 'secrets');
    this.shown.push({ plural: source.plural, name: source.name, dir, items: source.items, mode, files });
  }

  private writeField(dir: string, path: string, fieldPath: string | undefined, mode: number): void {
    if (!fieldPath) return;
    writeAtomically(join(dir, path), fieldValue(this.pod, fieldPath, this.addresses), mode);
  }

  private async writeToken(dir: string, source: { path: string; expirationSeconds?: number; audience?: string }, mode: number): Promise<void> {
    const namespace = this.pod.metadata.namespace ?? 'default';
    const account = this.pod.spec.serviceAccountName ?? 'default';
    const expirationSeconds = source.expirationSeconds ?? 3600;
    const answer = await this.api.create<{ status: { token: string } }>(`/api/v1/namespaces/${namespace}/serviceaccounts/${account}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        audiences: source.audience ? [source.audience] : [],
        expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: this.pod.metadata.name, uid: this.pod.metadata.uid },
      },
    });
    writeAtomically(join(dir, source.path), answer.status.token, mode);
    const renew = setTimeout(() => {
      this.writeToken(dir, source, mode).catch((error: Error) => this.log(`renewing the token of ${namespace}/${this.pod.metadata.name}: ${error.message}`));
    }, expirationSeconds * 800);
    renew.unref();
    this.timers.push(renew);
  }
}

/** Writes the keys (all, or those `items` name) as files of `dir`, leaving unchanged files alone; returns their paths. */
function writeKeys(dir: string, source: DataSource, items: KeyToPath[] | undefined, mode: number, base64: boolean): string[] {
  const values = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(source.data ?? {})) values.set(key, base64 ? Buffer.from(value, 'base64') : Buffer.from(value));
  for (const [key, value] of Object.entries(source.binaryData ?? {})) values.set(key, Buffer.from(value, 'base64'));
  const wanted: KeyToPath[] = items ?? [...values.keys()].map((key) => ({ key, path: key }));
  const missing = wanted.find((item) => !values.has(item.key));
  if (missing) throw new VolumeError(`key "${missing.key}" not found`);
  for (const item of wanted) {
    const file = join(dir, item.path);
    const value = values.get(item.key)!;
    if (!sameContent(file, value)) writeAtomically(file, value, item.mode ?? mode);
  }
  return wanted.map((item) => item.path);
}

function sameContent(file: string, content: Buffer): boolean {
  try {
    return readFileSync(file).equals(content);
  } catch {
    return false;
  }
}

/** Writes beside the file and renames over it, so a container never reads half a file. */
function writeAtomically(file: string, content: string | Buffer, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode });
  renameSync(temporary, file);
}
