import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServerProcess } from '../process.js';

const dir = mkdtempSync(join(tmpdir(), 'mc-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('music-catalogue serve', () => {
  it('creates and migrates the database, prints the bootstrap admin token once, and stops cleanly on SIGTERM', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'nested', 'catalogue.db')}`, SQLITE_CREATE_DIRECTORY: 'on', LOG_LEVEL: 'info' };
    const first = await startServerProcess(env);
    // Messages for the operator are plain text on stderr; stdout is the JSON log stream alone.
    const match = /Bearer (mc_[A-Za-z0-9_-]+)/.exec(first.stderr());
    expect(match).not.toBeNull();
    const token = match![1]!;
    expect(first.stderr()).toContain(`listening on ${first.url}`);

    const created = await fetch(`${first.url}/artists`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Stereolab', image: 'https://img.example.com/s.jpg' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const logLines = first.stdout().trimEnd().split('\n');
    const logs = logLines.map((line) => JSON.parse(line) as { msg?: string; reqId?: string });
    expect(logs.some((l) => l.msg === 'request completed' && typeof l.reqId === 'string')).toBe(true);
    expect(first.stdout()).not.toContain(token);

    const second = await startServerProcess(env);
    try {
      expect(second.stderr()).not.toContain('mc_');
      expect(second.stdout()).not.toContain('mc_');
      const res = await fetch(`${second.url}/artists/${id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ name: 'Stereolab', image: 'https://img.example.com/s.jpg' });
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('does not create a token when CATALOGUE_ADMIN_TOKEN is set, and accepts that token', async () => {
    const adminToken = 'operator-chosen-admin-token-123';
    const srv = await startServerProcess({ DATABASE_URL: `sqlite:${join(dir, 'env-token.db')}`, CATALOGUE_ADMIN_TOKEN: adminToken });
    try {
      expect(srv.stderr()).not.toContain('mc_');
      expect(srv.stdout()).not.toContain('mc_');
      const res = await fetch(`${srv.url}/tokens`, { headers: { authorization: `Bearer ${adminToken}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exited;
    }
  });

  it('serves, from the bundled file, what it reads from outside it: the docs page and its assets, and the version in the OpenAPI document', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const srv = await startServerProcess({ DATABASE_URL: `sqlite:${join(dir, 'docs.db')}`, CATALOGUE_ADMIN_TOKEN: 'operator-chosen-admin-token-123' });
    try {
      const page = await fetch(`${srv.url}/docs/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('swagger-ui');
      const css = await fetch(`${srv.url}/docs/static/swagger-ui.css`);
      expect(css.status).toBe(200);
      expect(css.headers.get('content-type')).toMatch(/^text\/css/);
      expect((await css.text()).length).toBeGreaterThan(10_000);
      const doc = await fetch(`${srv.url}/openapi.json`);
      expect(doc.status).toBe(200);
      expect(((await doc.json()) as { info: { version: string } }).info.version).toBe(version);
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exited;
    }
  });

  it('refuses to start on invalid configuration with one line naming the variable', async () => {
    const res = await runCli(['serve'], { PORT: 'eighty', DATABASE_URL: `sqlite:${join(dir, 'never.db')}` });
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^music-catalogue: invalid configuration: PORT must be an integer/)]);
  });
});

describe('music-catalogue migrate', () => {
  it('applies the migrations once, then reports the schema up to date', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'migrate.db')}` };
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^applied: 20261122T0001_catalogue/);
    const again = await runCli(['migrate'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('schema is up to date\n');
  });

  it('prints help', async () => {
    const res = await runCli(['migrate', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('music-catalogue migrate');
  });
});
