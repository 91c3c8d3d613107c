import { mkdirSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, postgresServerUrl, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { startServerProcess, type ServerProcess } from '../process.js';
import { query } from './cluster.js';
import { writeLoad } from './load.js';

// Instances come and go under load, behind PgBouncer (the run's, test/scale/global-setup.ts): three
// instances take writes, a fourth joins, one is sent SIGTERM. Clients behave as behind a load
// balancer: the instances in rotation in turn, a write that got no answer at all (connection refused
// or reset) sent again to the next instance with the same Idempotency-Key.

let database: TestDatabase;
const instances: ServerProcess[] = [];

/** The database's own URL on the primary (the app's goes through PgBouncer). */
function directUrl(): string {
  const url = new URL(postgresServerUrl());
  url.pathname = new URL(database.url).pathname;
  return url.toString();
}

function start(): Promise<ServerProcess> {
  return startServerProcess({
    DATABASE_URL: database.url,
    CATALOGUE_ADMIN_TOKEN: ADMIN_TOKEN,
    RATE_LIMIT_PER_MINUTE: '0',
    PG_POOL_SIZE: '4',
    PG_PREPARED_STATEMENTS: 'off',
  }).then((i) => {
    instances.push(i);
    return i;
  });
}

beforeAll(async () => {
  // Migrated directly by freshDatabase; the instances get a URL through PgBouncer.
  database = await freshDatabase('postgres');
  expect(database.url).toContain(`:${new URL(process.env.TEST_PGBOUNCER_URL!).port}/`);
});
afterAll(async () => {
  for (const i of instances) i.child.kill('SIGKILL');
  await database.drop();
});

describe('instances behind PgBouncer', () => {
  it('start with nothing to migrate without taking the migration lock (it would leak through transaction pooling)', async () => {
    // Another session holds Kysely's migration lock the whole time: an instance that asked for it would
    // wait, and not start.
    const holder = new pg.Client({ connectionString: directUrl() });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock(3853314791062309107)');
      await Promise.all([start(), start(), start()]);
    } finally {
      await holder.end();
    }
    expect(instances).toHaveLength(3);
  });

  it('a fourth joins and one drains on SIGTERM under write load: no accepted request fails, no write lost or doubled', async () => {
    expect(instances).toHaveLength(3);
    const rotation = instances.map((i) => i.url);
    const load = writeLoad({ targets: () => rotation, loops: 6, token: ADMIN_TOKEN, retryUnanswered: true });
    const acked = (url?: string) => load.outcomes.filter((o) => o.status === 201 && (url === undefined || o.instance === url)).length;

    await load.until(() => acked() >= 150);
    const fourth = await start();
    rotation.push(fourth.url);
    await load.until(() => acked(fourth.url) >= 30);

    // SIGTERM while it takes requests; the load balancer takes it out of rotation once it has exited.
    const leaving = instances[0]!;
    const before = acked();
    const sigterm = performance.now();
    leaving.child.kill('SIGTERM');
    const code = await leaving.exited;
    rotation.splice(rotation.indexOf(leaving.url), 1);
    const exited = performance.now();
    await load.until(() => acked() >= before + 150);
    await load.stop();

    expect(code).toBe(0);
    const outcomes = load.outcomes;
    // Every answer was a success; the only failures are connections the leaving instance did not accept.
    const answered = outcomes.filter((o) => typeof o.status === 'number');
    expect(answered.filter((o) => o.status !== 201).map((o) => `${o.status} ${o.body}`)).toEqual([]);
    const unanswered = outcomes.filter((o) => typeof o.status !== 'number');
    for (const o of unanswered) {
      expect(o.instance).toBe(leaving.url);
      expect(['ECONNREFUSED', 'ECONNRESET']).toContain(o.status);
    }
    // Each write stored exactly once, under the id its answer gave.
    const acknowledged = new Map<string, number>();
    for (const o of answered) {
      const seen = acknowledged.get(o.name);
      if (seen !== undefined) expect(o.id).toBe(seen);
      acknowledged.set(o.name, o.id!);
    }
    const rows = await query<{ id: number; name: string }>(directUrl(), `select id, name from artists where name like 'load-%'`);
    expect(rows.length).toBe(acknowledged.size);
    expect(new Map(rows.map((r) => [r.name, r.id]))).toEqual(acknowledged);

    const drained = outcomes.filter((o) => o.instance === leaving.url && o.status === 201 && o.start < sigterm && o.end > sigterm).length;
    const figures = JSON.stringify({
      writes: acknowledged.size,
      answers: answered.length,
      answeredDuringDrain: drained,
      refused: unanswered.filter((o) => o.status === 'ECONNREFUSED').length,
      reset: unanswered.filter((o) => o.status === 'ECONNRESET').length,
      retriedReplays: answered.length - acknowledged.size,
      drainSeconds: Math.round(exited - sigterm) / 1000,
    });
    mkdirSync('test-artifacts', { recursive: true });
    writeFileSync('test-artifacts/scale-instances.json', figures + '\n');
    console.log(figures);
  }, 120_000);
});
