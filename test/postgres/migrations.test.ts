import { afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { makeConfig } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { runCli } from '../process.js';

const ALL = Object.keys(migrations);
const dropped: TestDatabase[] = [];
afterEach(async () => {
  for (const d of dropped.splice(0)) await d.drop();
});

async function fresh(): Promise<TestDatabase> {
  const d = await freshDatabase('postgres');
  dropped.push(d);
  return d;
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

describe('migrateToLatest on PostgreSQL', () => {
  it('with several instances starting at once, runs each migration exactly once and all succeed', async () => {
    const database = await fresh();
    const instances = Array.from({ length: 6 }, () => connect(makeConfig({ databaseUrl: database.url, pgPoolSize: 2 })));
    try {
      const outcomes = await Promise.all(instances.map((c) => migrateToLatest(c.db)));
      const applied = outcomes
        .flat()
        .filter((r) => r.status === 'Success')
        .map((r) => r.migrationName);
      expect(applied.sort()).toEqual([...ALL].sort());
      expect(outcomes.filter((o) => o.length > 0)).toHaveLength(1);
      expect(outcomes.flat().filter((r) => r.status !== 'Success')).toEqual([]);
    } finally {
      await Promise.all(instances.map((c) => c.close()));
    }
    const recorded = await query<{ name: string }>(database.url, 'select name from kysely_migration order by name');
    expect(recorded.map((r) => r.name)).toEqual(ALL);
    const tables = await query<{ table_name: string }>(
      database.url,
      `select table_name from information_schema.tables where table_schema = '${database.schema}' order by table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'albums',
      'aliases',
      'artists',
      'events',
      'events_counter',
      'idempotency_keys',
      'kysely_migration',
      'kysely_migration_lock',
      'songs',
      'table_version_slots',
      'tokens',
      'users',
      'users_counts',
      'users_counts_delta',
      'users_counts_folded',
      'users_name_counts',
      'users_name_counts_delta',
      'users_name_counts_folded',
      'webhook_deliveries',
      'webhooks',
    ]);
  });

  it('keeps each schema of one database on its own migration history', async () => {
    const first = await fresh();
    const second = await fresh();
    for (const d of [first, second]) {
      const conn = connect(makeConfig({ databaseUrl: d.url }));
      try {
        const results = await migrateToLatest(conn.db);
        expect(results.map((r) => r.migrationName)).toEqual(ALL);
      } finally {
        await conn.close();
      }
    }
  });
});

describe('music-catalogue migrate on PostgreSQL', () => {
  it('applies the migrations once, then reports the schema up to date', async () => {
    const database = await fresh();
    const first = await runCli(['migrate'], { DATABASE_URL: database.url });
    expect(first).toEqual({ code: 0, stdout: `applied: ${ALL.join(', ')}\n`, stderr: '' });
    const again = await runCli(['migrate'], { DATABASE_URL: database.url });
    expect(again).toEqual({ code: 0, stdout: 'schema is up to date\n', stderr: '' });
  });

  it('fails with one line and exit code 1 when the server cannot be reached', async () => {
    const res = await runCli(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test', PG_CONNECT_TIMEOUT_MS: '500' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^music-catalogue( migrate)?: .*ECONNREFUSED/);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });
});
