// Keeps DESIGN.md's "imports point down" true where lint cannot: no import cycle anywhere in the
// source tree. A unit test: it reads the sources, no server process.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const roots = ['server', 'machines', 'loadtest', 'reports', 'scenarios', 'dashboard', 'conformance', 'oracle'];

function sourceFiles(dir: string, into: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(file, into);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) into.push(file);
  }
  return into;
}

// Relative imports of every kind: `import`, `import type`, `export … from`, `import()`.
// ES-module specifiers name the emitted `.js`; the source is the `.ts` beside it.
function relativeImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  const targets: string[] = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = path.resolve(path.dirname(file), fileName);
    const candidates = [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, path.join(target, 'index.ts')];
    const found = candidates.find((candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile());
    if (found !== undefined) targets.push(found);
  }
  return targets;
}

function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(files.map((file) => [file, relativeImports(file).filter((target) => known.has(target))]));
}

/** Tarjan's strongly connected components; returns the ones that hold a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** One concrete loop through a component, start -> … -> start, for a readable failure. */
function loopThrough(graph: Map<string, string[]>, component: string[]): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const loop: string[] = [];
        for (let at = node; at !== start; at = cameFrom.get(at)!) loop.unshift(at);
        return [start, ...loop, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return component;
}

/**
 * Imports from one subfolder of `base` into another, or from a file flat in `base` into a
 * subfolder (but from `exempt`), by the resolved paths of non-test sources.
 */
function folderCrossings(base: string, exempt: string[] = []): string[] {
  const folderOf = (file: string): string | undefined => {
    const parts = path.relative(base, file).split(path.sep);
    return parts.length > 1 && !parts[0]!.startsWith('..') ? parts[0] : undefined;
  };
  const files = sourceFiles(base).filter((file) => !file.endsWith('.test.ts') && !exempt.includes(file));
  const graph = importGraph(sourceFiles(path.join(root, 'server')));
  return files.flatMap((file) =>
    (graph.get(file) ?? [])
      .filter((target) => target.startsWith(base + path.sep) && folderOf(target) !== undefined && folderOf(target) !== folderOf(file))
      .map((target) => `${path.relative(root, file)} -> ${path.relative(root, target)}`),
  );
}

describe('source layout', () => {
  it('has no import cycle', () => {
    const files = roots.flatMap((dir) => sourceFiles(path.join(root, dir)));
    expect(files.length).toBeGreaterThan(100);
    const graph = importGraph(files);
    const loops = cycles(graph).map((component) =>
      loopThrough(graph, component)
        .map((file) => path.relative(root, file))
        .join(' -> '),
    );
    expect(loops, `import cycles:\n${loops.join('\n')}`).toEqual([]);
  });

  // DESIGN.md "Adapters by audience": the resource API, the sidecar, the allocator and the web
  // pages share only the request plumbing flat in server/api/. eslint's floors cannot tell one
  // sibling folder's relative imports from another's, so the resolved imports are checked here.
  it('keeps server/api/ audiences apart', () => {
    const crossings = folderCrossings(path.join(root, 'server', 'api'));
    expect(crossings, `imports between api/ audiences (or from the shared plumbing into one):\n${crossings.join('\n')}`).toEqual([]);
  });

  // DESIGN.md "Kinds answer for themselves": what kinds share sits flat in server/kinds/, so no kind
  // folder imports another, and the shared modules import none (but the list of them all).
  it('keeps server/kinds/ folders apart', () => {
    const kinds = path.join(root, 'server', 'kinds');
    const crossings = folderCrossings(kinds, [path.join(kinds, 'definitions.ts')]);
    expect(crossings, `imports between kind folders (or from a shared module into one):\n${crossings.join('\n')}`).toEqual([]);
  });
});
