import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, postgresServerUrl, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { startPgBouncer, teardownAll, type Bouncer } from './cluster.js';
import { pgbouncerTracksPreparedStatements, pgbouncerVersion } from './pgbouncer-version.js';

// Named prepared statements (PG_PREPARED_STATEMENTS=on, the default) behind PgBouncer in transaction
// mode. Two instances share PgBouncer's one server connection (default_pool_size = 1), so whatever
// one instance prepares there the other meets. Each instance names its statements mc0, mc1, ... on
// its own: without PgBouncer tracking them (1.21+, max_prepared_statements) the second instance's
// first Parse of "mc0" finds the first one's already there. With tracking, PgBouncer renames them.

const tracks = pgbouncerTracksPreparedStatements();
let database: TestDatabase;
let bouncer: Bouncer;
const apps: FastifyInstance[] = [];
/** The SQLSTATE of each error the second instance logs. */
const secondErrors: string[] = [];

beforeAll(async () => {
  database = await freshDatabase('postgres');
  bouncer = await startPgBouncer(
    { port: Number(new URL(postgresServerUrl()).port) },
    { default_pool_size: 1, ...(tracks ? { max_prepared_statements: 200 } : {}) },
  );
  const url = new URL(database.url);
  url.port = String(bouncer.port);
  for (let i = 0; i < 2; i++) {
    const stream = { write: (line: string) => i === 1 && secondErrors.push(String((JSON.parse(line) as { err?: { code?: unknown } }).err?.code)) };
    const config = makeConfig({ databaseUrl: url.toString(), adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0, pgPoolSize: 1, pgPreparedStatements: true });
    apps.push(await buildApp(config, { logger: { level: 'error', stream } }));
  }
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await database.drop();
  teardownAll();
});

async function lookups(app: FastifyInstance): Promise<number[]> {
  const statuses: number[] = [];
  // No response cache between them: each lookup asks the database (a new id each time, none found).
  for (let id = 1; id <= 4; id++) {
    statuses.push((await app.inject({ method: 'GET', url: `/artists/${900_000 + id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).statusCode);
  }
  return statuses;
}

describe(`PG_PREPARED_STATEMENTS=on through PgBouncer ${pgbouncerVersion().join('.')} in transaction mode`, () => {
  it.runIf(tracks)('works when PgBouncer tracks prepared statements (max_prepared_statements)', async () => {
    expect(await lookups(apps[0]!)).toEqual([404, 404, 404, 404]);
    expect(await lookups(apps[1]!)).toEqual([404, 404, 404, 404]);
  });

  it.runIf(!tracks)('fails when PgBouncer cannot track them (before 1.21): PG_PREPARED_STATEMENTS=off is needed', async () => {
    expect(await lookups(apps[0]!)).toEqual([404, 404, 404, 404]);
    const second = await lookups(apps[1]!);
    expect(second).toContain(500);
    // 42P05: prepared statement "mc0" already exists (the first instance's, on the shared server connection).
    expect(secondErrors).toContain('42P05');
  });
});
