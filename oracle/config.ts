import { readFileSync } from 'node:fs';
import { type ApiCredentials } from './api.js';
import { type ImageTable } from './images.js';
import { type OraclePaths } from './paths.js';

/** What `up` decided for a run, written to run/oracle.json and read by the supervisor and each kubelet. */
export interface OracleConfig {
  paths: OraclePaths;
  api: ApiCredentials;
  nodes: number;
  /** Pods a node takes. */
  maxPods: number;
  images: ImageTable;
  /** Agones's feature gates (FEATURE_GATES of its components), as given to `up`. */
  featureGates: string;
  agonesSrc: string;
}

export function readConfig(file: string): OracleConfig {
  return JSON.parse(readFileSync(file, 'utf8')) as OracleConfig;
}
