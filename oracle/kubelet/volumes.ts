import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Api } from '../api.js';
import { fieldValue } from './downward.js';
import { type KeyToPath, type Pod, type Volume } from './pod.js';

/**
 * A pod's volumes as directories of the pod's folder, made before its containers start:
 * emptyDir, secret, configMap, downwardAPI, projected (service-account tokens, requested with the
 * TokenRequest API and renewed at 80% of their life, as the kubelet does) and hostPath.
 */

export class VolumeError extends Error {}

interface DataSource {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export class PodVolumes {
  /** Where each volume is on the machine, by name. */
  readonly paths = new Map<string, string>();
  private readonly timers: NodeJS.Timeout[] = [];

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
  }

  private async fill(volume: Volume, path: string): Promise<void> {
    const namespace = this.pod.metadata.namespace ?? 'default';
    if (volume.secret) {
      const secret = await this.source('secrets', namespace, volume.secret.secretName, volume.secret.optional);
      writeKeys(path, secret, volume.secret.items, volume.secret.defaultMode ?? 0o644, true);
    } else if (volume.configMap) {
      const map = await this.source('configmaps', namespace, volume.configMap.name, volume.configMap.optional);
      writeKeys(path, map, volume.configMap.items, volume.configMap.defaultMode ?? 0o644, false);
    } else if (volume.downwardAPI) {
      for (const item of volume.downwardAPI.items) this.writeField(path, item.path, item.fieldRef?.fieldPath, item.mode ?? volume.downwardAPI.defaultMode ?? 0o644);
    } else if (volume.projected) {
      const mode = volume.projected.defaultMode ?? 0o644;
      for (const source of volume.projected.sources) {
        if (source.serviceAccountToken) await this.writeToken(path, source.serviceAccountToken, mode);
        else if (source.configMap) writeKeys(path, await this.source('configmaps', namespace, source.configMap.name, source.configMap.optional), source.configMap.items, mode, false);
        else if (source.secret) writeKeys(path, await this.source('secrets', namespace, source.secret.name, source.secret.optional), source.secret.items, mode, true);
        else if (source.downwardAPI) for (const item of source.downwardAPI.items) this.writeField(path, item.path, item.fieldRef?.fieldPath, item.mode ?? mode);
      }
    }
    // emptyDir (and any kind not named above) is the empty directory itself.
  }

  private async source(plural: 'secrets' | 'configmaps', namespace: string, name: string, optional: boolean | undefined): Promise<DataSource> {
    const found = await this.api.find<DataSource>(`/api/v1/namespaces/${namespace}/${plural}/${name}`);
    if (found) return found;
    if (optional) return {};
    throw new VolumeError(`${plural === 'secrets' ? 'secret' : 'configmap'} "${name}" not found`);
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

function writeKeys(dir: string, source: DataSource, items: KeyToPath[] | undefined, mode: number, base64: boolean): void {
  const values = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(source.data ?? {})) values.set(key, base64 ? Buffer.from(value, 'base64') : Buffer.from(value));
  for (const [key, value] of Object.entries(source.binaryData ?? {})) values.set(key, Buffer.from(value, 'base64'));
  const wanted: KeyToPath[] = items ?? [...values.keys()].map((key) => ({ key, path: key }));
  for (const item of wanted) {
    const value = values.get(item.key);
    if (value === undefined) throw new VolumeError(`key "${item.key}" not found`);
    writeAtomically(join(dir, item.path), value, item.mode ?? mode);
  }
}

/** Writes beside the file and renames over it, so a container never reads half a file. */
function writeAtomically(file: string, content: string | Buffer, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode });
  renameSync(temporary, file);
}
