import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, backend, freshDatabase, postgresServerUrl, type TestDatabase } from '../database.js';
import { runCli, startServerProcess, type ServerProcess } from '../process.js';

// `backup` while the service serves and writes, `restore` into a fresh database, and a service on the
// restored database that has every write acknowledged before the backup started: catalogue, users,
// aliases, tokens, webhooks and events.

const ADMIN = 'backup-test-admin-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'mc-backup-'));
let source: TestDatabase;
let restoredUrl: string;
let dropRestored = async () => {};
const servers: ServerProcess[] = [];

async function start(url: string): Promise<ServerProcess> {
  const srv = await startServerProcess({ DATABASE_URL: url, CATALOGUE_ADMIN_TOKEN: ADMIN, RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOW_PRIVATE: 'on' });
  servers.push(srv);
  return srv;
}

async function stop(srv: ServerProcess): Promise<void> {
  srv.child.kill('SIGTERM');
  expect(await srv.exited).toBe(0);
}

function api(srv: ServerProcess, token = ADMIN) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(srv.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };
}

beforeAll(async () => {
  source = await freshDatabase();
  if (backend === 'sqlite') {
    restoredUrl = `sqlite:${join(dir, 'restored.db')}`;
  } else {
    // A database of its own (the backup recreates its schema, under its name): dropped afterwards.
    const name = `mc_restore_${randomBytes(6).toString('hex')}`;
    await adminQuery(`create database ${name}`);
    const url = new URL(postgresServerUrl());
    url.pathname = `/${name}`;
    url.searchParams.set('options', `-c search_path=${source.schema!}`);
    restoredUrl = url.toString();
    dropRestored = () => adminQuery(`drop database if exists ${name} with (force)`);
  }
});

afterAll(async () => {
  for (const srv of servers) if (srv.child.exitCode === null) srv.child.kill('SIGKILL');
  await source.drop();
  await dropRestored();
  rmSync(dir, { recursive: true, force: true });
});

describe('backup while writing, restore into a fresh database', () => {
  it('has every write acknowledged before the backup started, with users, aliases, tokens, webhooks and events', async () => {
    const srv = await start(source.url);
    const admin = api(srv);

    // What an operator's data holds besides the catalogue, all acknowledged before the backup.
    const token = (await admin('POST', '/tokens', { scopes: ['read', 'write'], name: 'kept' })) as { status: number; body: { id: number; token: string } };
    expect(token.status).toBe(201);
    const users: number[] = [];
    for (const [i, country] of ['Brazil', 'Chile', 'Brazil'].entries()) {
      const res = await admin('POST', '/users', {
        first_name: `U${i}`,
        last_name: 'Backup',
        email: `u${i}@example.com`,
        age: 20 + i,
        status: 'active',
        country,
      });
      expect(res.status).toBe(201);
      users.push((res.body as { id: number }).id);
    }
    expect((await admin('PUT', '/aliases/users/backup-brazilians', { query: 'lives_in=brazil' })).status).toBe(201);
    const hook = await admin('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', types: ['artist.created'], secret: 'a-long-random-shared-secret' });
    expect(hook.status).toBe(201);

    // Writers that keep going through the backup; each acknowledged id is recorded as it is acknowledged.
    const writer = api(srv, token.body.token);
    const acked: number[] = [];
    let writing = true;
    let enough: () => void;
    const warmedUp = new Promise<void>((resolve) => (enough = resolve));
    const loops = Array.from({ length: 4 }, async (_, w) => {
      for (let n = 0; writing; n++) {
        const res = await writer('POST', '/artists', { name: `w${w}-${n}`, image: 'https://img.example.com/a.jpg' });
        expect(res.status).toBe(201);
        acked.push((res.body as { id: number }).id);
        if (acked.length >= 40) enough();
      }
    });
    await warmedUp;

    const before = [...acked];
    const backupFile = join(dir, backend === 'sqlite' ? 'catalogue.backup.db' : 'catalogue.dump');
    const backup = await runCli(['backup', '--file', backupFile], { DATABASE_URL: source.url });
    const during = acked.length - before.length;
    writing = false;
    await Promise.all(loops);
    expect(backup.stderr, backup.stderr).toMatch(/^backed up .* to .* in \d+\.\ds\n$/);
    expect(backup.code).toBe(0);
    // The service kept acknowledging writes while the backup ran.
    expect(during).toBeGreaterThan(0);
    await stop(srv);

    const restore = await runCli(['restore', '--file', backupFile], { DATABASE_URL: restoredUrl });
    expect(restore.stderr).toMatch(/^restored /);
    expect(restore.code).toBe(0);
    // A second restore into the same database is refused: it is no longer fresh.
    const again = await runCli(['restore', '--file', backupFile], { DATABASE_URL: restoredUrl });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/restore into a fresh database/);

    const restored = await start(restoredUrl);
    const read = api(restored);
    for (const id of before) expect([id, (await read('GET', `/artists/${id}`)).status]).toEqual([id, 200]);
    const total = await fetch(`${restored.url}/artists?size=1`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const count = Number(total.headers.get('x-total-count'));
    expect(count).toBeGreaterThanOrEqual(before.length);
    expect(count).toBeLessThanOrEqual(acked.length);
    // The token made before the backup still authenticates, with its scopes.
    const kept = api(restored, token.body.token);
    expect((await kept('GET', '/artists?size=1')).status).toBe(200);
    expect((await kept('POST', '/artists', { name: 'after restore', image: 'https://img.example.com/a.jpg' })).status).toBe(201);
    // Users and the alias over them.
    for (const id of users) expect((await read('GET', `/users/${id}`)).status).toBe(200);
    const alias = await read('GET', '/users/backup-brazilians');
    expect(alias.status).toBe(200);
    expect((alias.body as { first_name: string }[]).map((u) => u.first_name).sort()).toEqual(['U0', 'U2']);
    // The webhook, and the events of every acknowledged write (the feed a webhook resumes from).
    const hooks = await read('GET', '/webhooks');
    expect(hooks.body).toEqual([expect.objectContaining({ id: (hook.body as { id: number }).id, url: 'http://127.0.0.1:9/hook' })]);
    const events: { type: string; resource: { id?: number } }[] = [];
    for (let after = 0; ;) {
      const page = (await read('GET', `/events?after=${after}&size=500`)).body as { sequence: number; type: string; resource: { id?: number } }[];
      if (page.length === 0) break;
      events.push(...page);
      after = page[page.length - 1]!.sequence;
    }
    const created = new Set(events.filter((e) => e.type === 'artist.created').map((e) => e.resource.id));
    for (const id of before) expect(created.has(id)).toBe(true);
    expect(events.filter((e) => e.type === 'user.created')).toHaveLength(users.length);
    expect(events.some((e) => e.type === 'alias.created')).toBe(true);
    await stop(restored);
  });

  it('refuses without --file (usage, 2), a missing backup file, and a file that is not a backup, leaving no database behind', async () => {
    const target = `sqlite:${join(dir, 'never.db')}`;
    expect((await runCli(['backup'], { DATABASE_URL: source.url })).code).toBe(2);
    const missing = await runCli(['restore', '--file', join(dir, 'no-such-file')], { DATABASE_URL: target });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file');
    const notBackup = join(dir, 'not-a-backup');
    await import('node:fs').then((fs) => fs.writeFileSync(notBackup, 'hello, this is not a database at all, just text'.repeat(100)));
    const bad = await runCli(['restore', '--file', notBackup], { DATABASE_URL: backend === 'sqlite' ? target : restoredUrl });
    expect(bad.code).toBe(1);
    expect(bad.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect((await import('node:fs')).existsSync(join(dir, 'never.db'))).toBe(false);
  });
});
