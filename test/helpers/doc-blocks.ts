/**
 * The shell blocks of the documentation, as test/docs.e2e.test.ts runs them. A fenced block whose
 * language is a shell (sh, bash, shell, console) says in its info string what it is:
 *
 *   ```sh doc-test          run by the test, in order, in the page's folder
 *   ```sh doc-test server   a long-running `npx fleetsim serve …`: started in the background, the
 *                           page's later blocks talk to it (as from a second terminal)
 *   ```sh illustration      shown, not run (needs a real cluster, Go, a browser, a long run…)
 *
 * A shell block with neither mark is an error, so no command reaches a page untested by accident.
 */

export type BlockKind = 'run' | 'server' | 'illustration';

export interface DocBlock {
  /** The page, relative to the repository. */
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  kind: BlockKind;
  body: string;
}

export interface ParsedPage {
  blocks: DocBlock[];
  /** Shell blocks with no mark: `page:line`. */
  unmarked: string[];
}

const SHELLS = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/;

export function parseDocBlocks(page: string, markdown: string): ParsedPage {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  const unmarked: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, fence, lang, rest] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j].trim().startsWith(fence) && lines[j].trim().replace(/[`~]/g, '') === '')) body.push(lines[j++]);
    const start = i + 1;
    i = j;
    if (!SHELLS.has(lang.toLowerCase())) continue;
    const words = rest.split(/\s+/).filter(Boolean);
    const kind: BlockKind | undefined = words.includes('illustration')
      ? 'illustration'
      : words.includes('doc-test')
        ? words.includes('server')
          ? 'server'
          : 'run'
        : undefined;
    if (kind === undefined) unmarked.push(`${page}:${start}`);
    else blocks.push({ page, line: start, kind, body: body.join('\n') });
  }
  return { blocks, unmarked };
}
