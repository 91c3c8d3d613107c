import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';

// Which backend this test run uses. vitest.config.ts runs every test file twice when
// TEST_DATABASE_URL is set: project "sqlite", and project "postgres" with TEST_BACKEND=postgres.

export const backend: 'sqlite' | 'postgres' = process.env.TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

/** The server every PostgreSQL test uses (a database the tests may create schemas in). */
export function postgresServerUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: the postgres test project needs a PostgreSQL server');
  return url;
}

export interface TestDatabase {
  /** DATABASE_URL for the app: a fresh SQLite file, or a fresh schema selected through search_path. */
  url: string;
  /** The PostgreSQL schema, when on PostgreSQL. */
  schema?: string;
  drop(): Promise<void>;
}

/** DATABASE_URL selecting `schema` on the test server, through the startup `options` parameter. */
export function urlForSchema(serverUrl: string, schema: string): string {
  const url = new URL(serverUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Runs one statement on the test server outside any app (schema setup and teardown). */
export async function adminRows<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: postgresServerUrl(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

export async function adminQuery(text: string): Promise<void> {
  await adminRows(text);
}

/** A fresh, empty database for one app: nothing shared with any other test file or run. */
export async function freshDatabase(on: 'sqlite' | 'postgres' = backend): Promise<TestDatabase> {
  if (on === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mc-test-'));
    return { url: `sqlite:${join(dir, 'catalogue.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (process.env.TEST_PGBOUNCER_URL) return databaseBehindPgBouncer(process.env.TEST_PGBOUNCER_URL);
  // Generated here, never from input: safe to put in the DDL text. Within a run (MC_TEST_RUN, set by
  // test/global-setup.ts) the schema is dropped by the run's teardown, not here: a DROP SCHEMA while
  // another file's app migrates fails that migration (see there).
  const run = process.env.MC_TEST_RUN;
  const schema = `mc_test_${run ?? process.pid}_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create schema ${schema}`);
  return {
    url: urlForSchema(postgresServerUrl(), schema),
    schema,
    drop: async () => {
      if (run === undefined) await adminQuery(`drop schema if exists ${schema} cascade`);
    },
  };
}

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * npm run test:scale: a database of its own on the primary (TEST_DATABASE_URL), migrated there directly
 * (the migration lock is a session-level advisory lock, which transaction pooling does not keep), and
 * a URL through PgBouncer for the app. A database rather than a schema: PgBouncer does not forward
 * the `options` startup parameter that selects a schema. The whole cluster is removed after the run.
 */
async function databaseBehindPgBouncer(bouncerUrl: string): Promise<TestDatabase> {
  const name = `mc_test_${process.env.MC_TEST_RUN ?? process.pid}_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const direct = connect({
    databaseUrl: withDatabase(postgresServerUrl(), name),
    sqliteSynchronous: 'normal',
    pgPoolSize: 1,
    pgConnectTimeoutMs: 5000,
    pgPreparedStatements: false,
    pgIdleMs: 60_000,
  });
  try {
    await migrateToLatest(direct.db);
  } finally {
    await direct.close();
  }
  return { url: withDatabase(bouncerUrl, name), drop: async () => {} };
}
