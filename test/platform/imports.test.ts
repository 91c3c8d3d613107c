import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Imports run downward (docs/architecture.md, "Layers"): every file of src/ belongs to the first layer
// below whose rule it matches, and may import files of its own layer or of a lower one, never of a
// higher one; no import cycle, type-only imports included; only the migration runner imports a
// migration. Read from the source text with the TypeScript compiler's own import scanner.

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Lowest first. */
const LAYERS: [name: string, member: (file: string) => boolean][] = [
  ['base', (f) => ['config.ts', 'package-info.ts', 'outage-log.ts', 'start-errors.ts', 'start-line.ts', 'schemas.ts'].includes(f) || f.startsWith('errors/')],
  ['tables', (f) => /^modules\/([^/]+\/[^/]+\.)?table\.ts$/.test(f) || f === 'modules/events/events.contract.ts'],
  ['db', (f) => f.startsWith('db/') && !f.startsWith('db/migrations/') && f !== 'db/migrate.ts'],
  ['migrations', (f) => f.startsWith('db/migrations/') || f === 'db/migrate.ts'],
  ['query', (f) => f.startsWith('query/') || f === 'validation.ts'],
  ['auth', (f) => f.startsWith('auth/')],
  ['metrics', (f) => f.startsWith('metrics/')],
  ['http', (f) => f.startsWith('http/')],
  ['modules', (f) => f.startsWith('modules/')],
  ['features', (f) => f.startsWith('docs/') || f.startsWith('seed/') || f.startsWith('transfer/')],
  ['app', (f) => ['app.ts', 'server.ts', 'cluster.ts', 'cli.ts'].includes(f) || f.startsWith('cli/')],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [relative(SRC, join(dir, e.name)).split('\\').join('/')] : [],
  );
}

/** Each file's relative imports (static, type-only, re-exports, dynamic), as files of src/. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
    graph.set(
      file,
      importedFiles.filter((i) => i.fileName.startsWith('.')).map((i) => posix.normalize(posix.join(posix.dirname(file), i.fileName.replace(/\.js$/, '.ts')))),
    );
  }
  return graph;
}

const layerOf = (file: string) => LAYERS.findIndex(([, member]) => member(file));

/** Every import cycle (a strongly connected component of more than one file, or a file importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) out.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('imports in src/', () => {
  const graph = importGraph();

  it('names only files that exist', () => {
    const missing = [...graph].flatMap(([file, imports]) => imports.filter((i) => !graph.has(i)).map((i) => `${file} -> ${i}`));
    expect(missing).toEqual([]);
  });

  it('puts every file in a layer', () => {
    expect([...graph.keys()].filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  it('never imports a higher layer', () => {
    const upward = [...graph].flatMap(([file, imports]) =>
      imports.filter((i) => layerOf(i) > layerOf(file)).map((i) => `${file} (${LAYERS[layerOf(file)]![0]}) -> ${i} (${LAYERS[layerOf(i)]![0]})`),
    );
    expect(upward).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('imports a migration only from a migration or the runner', () => {
    const runtime = [...graph].flatMap(([file, imports]) =>
      file.startsWith('db/migrations/') || file === 'db/migrate.ts' ? [] : imports.filter((i) => i.startsWith('db/migrations/')).map((i) => `${file} -> ${i}`),
    );
    expect(runtime).toEqual([]);
  });
});
