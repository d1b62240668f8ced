// @ts-check
// Regenerates server/k8s/pod-spec-types.json from @kubernetes/client-node (npm run generate:pod-spec).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { formatPodSpecTypes, podSpecTypes } from './pod-spec-types.mjs';

const out = fileURLToPath(new URL('../server/k8s/pod-spec-types.json', import.meta.url));
const text = formatPodSpecTypes(podSpecTypes());
writeFileSync(out, text);
console.log(`${out}: ${Object.keys(JSON.parse(text)).length} types, ${text.length} bytes`);
