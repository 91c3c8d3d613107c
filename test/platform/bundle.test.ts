import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../process.js';

// The build (scripts/bundle.mjs) puts the server's own code (Fastify, the routes, the docs plugins)
// in a chunk that is loaded only where the app is built: a cluster's primary, which only migrates and
// forks, and the commands that do not serve start without loading it.

/** The files a built module imports statically (its top-level `import ... from "./..."`), relative to it. */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"|^import\s+"(\.{1,2}\/[^"]+)"/gms)) {
    out.push(join(dirname(file), m[1] ?? m[2]!));
  }
  return out;
}

/** Every built file the entry loads before any of its code runs. */
function loadedAtStart(entry: string): string[] {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length) for (const next of staticImports(queue.shift()!)) if (!seen.has(next) && seen.add(next)) queue.push(next);
  return [...seen];
}

describe('the build', () => {
  const atStart = loadedAtStart(CLI);
  const text = atStart.map((file) => readFileSync(file, 'utf8')).join('\n');

  it('loads the server (Fastify, the docs plugins, buildApp) only through a dynamic import', () => {
    expect(atStart.length).toBeGreaterThan(1);
    expect(text).not.toMatch(/from "@fastify\/swagger"/);
    expect(text).not.toMatch(/function buildApp\(/);
    expect(text).not.toMatch(/function fastify\(/);
    // ...which serve and openapi reach when they build the app.
    const dynamic = [...text.matchAll(/import\("(\.\/chunks\/[^"]+)"\)/g)].map((m) => join(dirname(CLI), m[1]!));
    const later = dynamic.flatMap(loadedAtStart).map((file) => readFileSync(file, 'utf8'));
    expect(later.some((t) => /function buildApp\(/.test(t))).toBe(true);
    expect(later.some((t) => /from "@fastify\/swagger"/.test(t))).toBe(true);
  });

  it('keeps what the primary needs in what it loads at start: the migrations and the admin token', () => {
    expect(text).toMatch(/function migrateToLatest\(/);
    expect(text).toMatch(/function bootstrapAdminToken\(/);
  });
});
