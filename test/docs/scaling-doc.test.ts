import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/scaling.md's table says what the scale run's conformance project runs. It carried a count of
// files and tests ("15 files, 422 tests") that went stale as tests were added (19 files, 544 tests
// in CI). The row names the files `conformance` in vitest.scale.config.ts lists instead, checked here.

const root = join(import.meta.dirname, '..', '..');

describe('docs/scaling.md: the conformance row', () => {
  it('names every file pattern the conformance project runs, and carries no count of files or tests', () => {
    const config = readFileSync(join(root, 'vitest.scale.config.ts'), 'utf8');
    const list = /const conformance = \[([\s\S]*?)\];/.exec(config)?.[1];
    expect(list).toBeDefined();
    const patterns = [...list!.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
    expect(patterns.length).toBeGreaterThan(0);
    const row = readFileSync(join(root, 'docs', 'scaling.md'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('| The conformance'));
    expect(row).toBeDefined();
    for (const pattern of patterns) expect(row, pattern).toContain(`\`${pattern}\``);
    expect(row).not.toMatch(/\d+ files|\d+ tests/);
  });
});
