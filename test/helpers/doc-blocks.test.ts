import { describe, expect, it } from 'vitest';
import { parseDocBlocks } from './doc-blocks.js';

describe('parseDocBlocks', () => {
  it('reads each shell block with its mark and line, and names the unmarked ones', () => {
    const page = [
      '# A page',
      '```sh doc-test server',
      'npx fleetsim serve',
      '```',
      '```sh doc-test',
      'kubectl get fleets',
      'echo ```not a fence',
      '```',
      '```bash illustration',
      'go build ./...',
      '```',
      '```yaml',
      'kind: Fleet',
      '```',
      '````sh',
      'curl "$FLEETSIM/metrics"',
      '````',
    ].join('\n');
    const { blocks, unmarked } = parseDocBlocks('p.md', page);
    expect(blocks).toEqual([
      { page: 'p.md', line: 2, kind: 'server', body: 'npx fleetsim serve' },
      { page: 'p.md', line: 5, kind: 'run', body: 'kubectl get fleets\necho ```not a fence' },
      { page: 'p.md', line: 9, kind: 'illustration', body: 'go build ./...' },
    ]);
    expect(unmarked).toEqual(['p.md:15']);
  });
});
