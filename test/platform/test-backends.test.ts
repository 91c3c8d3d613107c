import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { backend } from '../database.js';
import { POSTGRES_SKIPPED } from '../global-setup.js';

// `npm test` without a PostgreSQL server runs every test file on SQLite only: it says so, in one line
// after the summary, rather than passing as if both backends had run; in CI (CI set) it refuses to run.
// Checked by running vitest itself on one small test file, as `npm test` would.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

/** vitest on one test file with `env` (and none of this run's TEST_DATABASE_URL / CI): its exit code and output. */
function vitest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const { TEST_DATABASE_URL: _url, CI: _ci, TEST_BACKEND: _backend, ...inherited } = process.env;
  const child = spawn(process.execPath, [VITEST, 'run', 'test/query/shape-keys.test.ts'], { cwd: ROOT, env: { ...inherited, ...env } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe.runIf(backend === 'sqlite')('npm test without TEST_DATABASE_URL', () => {
  it('passes on SQLite and says once, plainly, that PostgreSQL was skipped', async () => {
    const { code, output } = await vitest({});
    expect(code, output).toBe(0);
    expect(output.split(POSTGRES_SKIPPED).length - 1, output).toBe(1);
  });

  it('fails in CI instead of skipping PostgreSQL', async () => {
    const { code, output } = await vitest({ CI: 'true' });
    expect(code, output).not.toBe(0);
    expect(output).toContain('CI is set but TEST_DATABASE_URL is not');
  });
});
