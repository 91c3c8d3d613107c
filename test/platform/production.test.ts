import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess } from '../process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const dir = mkdtempSync(join(tmpdir(), 'mc-production-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * What `npm prune --omit=dev` leaves: package.json, the launcher, the build, and node_modules holding
 * only the production dependency tree (as npm itself lists it), each package linked from this checkout.
 */
function productionInstall(): string {
  const app = join(dir, 'app');
  mkdirSync(join(app, 'node_modules', '@'), { recursive: true });
  for (const entry of ['package.json', 'bin', 'dist']) cpSync(join(ROOT, entry), join(app, entry), { recursive: true });
  const listed = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  for (const path of listed.trim().split('\n')) {
    const rel = relative(ROOT, path);
    // Top-level packages only (node_modules/x, node_modules/@scope/x): nested ones come with their parent.
    if (!/^node_modules\/(@[^/]+\/)?[^/@][^/]*$/.test(rel)) continue;
    mkdirSync(dirname(join(app, rel)), { recursive: true });
    symlinkSync(path, join(app, rel), 'dir');
  }
  return app;
}

describe('production start', () => {
  it('`npm start` runs the built file only: no build step, before it or in it', () => {
    expect(pkg.scripts.prestart).toBeUndefined();
    expect(pkg.scripts.start).toBe('node bin/music-catalogue.js serve');
    // The build happens once, at install (npm runs `prepare` on npm install and npm ci).
    expect(pkg.scripts.prepare).toBe('node scripts/prepare.mjs');
  });

  it('serves with the production dependencies alone (as after npm prune --omit=dev)', async () => {
    const app = productionInstall();
    expect(() => execFileSync(process.execPath, ['-e', "import('typescript')"], { cwd: app, stdio: 'ignore' })).toThrow();
    const args = (pkg.scripts.start ?? '').split(' ').slice(1); // `node` is this Node
    const srv = await startServerProcess(
      { DATABASE_URL: `sqlite:${join(dir, 'catalogue.db')}`, CATALOGUE_ADMIN_TOKEN: 'operator-chosen-admin-token-123' },
      undefined, // the default: a bound only for a start that hangs
      { args, cwd: app },
    );
    try {
      const ready = await fetch(`${srv.url}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', database: 'ok' });
      const created = await fetch(`${srv.url}/artists`, {
        method: 'POST',
        headers: { authorization: 'Bearer operator-chosen-admin-token-123', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Broadcast', image: 'https://img.example.com/b.jpg' }),
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('location')).toBe('/artists/1');
      const docs = await fetch(`${srv.url}/docs/`);
      expect(docs.status).toBe(200);
    } finally {
      srv.child.kill('SIGTERM');
      expect(await srv.exited).toBe(0);
    }
  });
});
