import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { adminQuery, freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN, client } from '../helpers.js';
import { captureLogs, LEVEL } from '../logs.js';

// PostgreSQL out of connection slots ("too many clients", SQLSTATE 53300) while it is up: a request
// needing a new connection waits for a slot instead of failing at once with 503. The slots here are
// those of a role with CONNECTION LIMIT 2, so no other user of the server is affected.

let database: TestDatabase;
const role = `mc_lim_${process.pid}_${randomBytes(3).toString('hex')}`;
let roleUrl: string;

beforeAll(async () => {
  database = await freshDatabase('postgres');
  // Migrate as the owner first; the limited role then finds nothing to do.
  const owner = await buildApp(makeConfig({ databaseUrl: database.url, logLevel: 'silent', adminToken: ADMIN_TOKEN }));
  await owner.close();
  const schema = database.schema!;
  await adminQuery(`create role ${role} login connection limit 2`);
  await adminQuery(`grant usage on schema ${schema} to ${role}`);
  await adminQuery(`grant all on all tables in schema ${schema} to ${role}`);
  await adminQuery(`grant all on all sequences in schema ${schema} to ${role}`);
  const url = new URL(database.url);
  url.username = role;
  url.password = '';
  roleUrl = url.toString();
});
afterAll(async () => {
  await database.drop();
  await adminQuery(`drop owned by ${role}`);
  await adminQuery(`drop role ${role}`);
});

describe('when PostgreSQL has no connection slot free', () => {
  it('makes a request wait for a slot (logged once) and answers it when one frees up', async () => {
    const logs = captureLogs();
    const app = await buildApp(
      // Without the users index, whose load in the background would take one of the two slots this test counts.
      makeConfig({
        databaseUrl: roleUrl,
        pgPoolSize: 2,
        adminToken: ADMIN_TOKEN,
        rateLimitPerMinute: 0,
        responseCacheBytes: 0,
        logLevel: 'info',
        usersIndex: false,
      }),
      {
        logger: { level: 'info', stream: logs.stream },
      },
    );
    let release!: () => void;
    const blocker = new pg.Client({ connectionString: roleUrl });
    try {
      await app.ready();
      // The pool's connection, held; the test takes the role's other slot.
      const held = app.db.connection().execute(() => new Promise<void>((resolve) => (release = resolve)));
      await blocker.connect();
      const pending = client(app, ADMIN_TOKEN).get('/artists');
      // The event: the pool met "too many clients" and is waiting rather than failing.
      const waiting = await logs.next((l) => l.msg === 'PostgreSQL has no connection slot free (too many clients); waiting for one');
      expect(waiting.level).toBe(LEVEL.warn);
      await blocker.end();
      const res = await pending;
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([]);
      expect(res.headers['x-total-count']).toBe('0');
      const back = await logs.next((l) => l.msg === 'PostgreSQL accepts connections again');
      expect(back.level).toBe(LEVEL.info);
      expect(logs.lines.filter((l) => l.level >= LEVEL.error)).toEqual([]);
      release();
      await held;
    } finally {
      release?.();
      await blocker.end().catch(() => {});
      await app.close();
    }
  });

  it('warns at start when the slots cannot hold what the pool may open', async () => {
    const logs = captureLogs();
    const app = await buildApp(makeConfig({ databaseUrl: database.url, pgPoolSize: 1000, adminToken: ADMIN_TOKEN, logLevel: 'info' }), {
      logger: { level: 'info', stream: logs.stream },
    });
    try {
      const warning = logs.lines.find((l) => typeof l.msg === 'string' && l.msg.includes('PG_POOL_SIZE'));
      expect(warning).toMatchObject({ level: LEVEL.warn, pg_pool_size: 1000 });
      expect(warning!.msg).toMatch(/^PostgreSQL has \d+ connection slots/);
    } finally {
      await app.close();
    }
  });
});
