import { Migrator, sql, type MigrationResult } from 'kysely';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';
import { migrations } from './migrations/index.js';

/**
 * The schema the migration bookkeeping lives in. Kysely looks for its tables in every schema unless
 * told one, so a second catalogue in another schema of the same PostgreSQL database (a test schema,
 * a staging copy) would see the first one's history and skip its own migrations.
 */
async function migrationSchema(db: Db): Promise<string | undefined> {
  if (!isPostgres(db)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL has no current schema: check search_path in DATABASE_URL');
  return schema;
}

/**
 * Brings the schema up to date. Several instances starting at once are safe: on PostgreSQL Kysely's
 * migrator holds an advisory lock around the run and applies the migrations in one transaction, so
 * one instance migrates and the others wait, then find nothing left to do; on SQLite the lock is a
 * write transaction on the database file.
 */
export async function migrateToLatest(db: Db): Promise<MigrationResult[]> {
  const schema = await migrationSchema(db);
  if (schema !== undefined && (await allApplied(db, schema))) return [];
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return results ?? [];
    if (attempt >= VANISHED_ATTEMPTS || !otherSchemaVanished(error))
      throw error instanceof Error ? error : new Error('the migrations failed', { cause: error });
    // Someone is dropping schemas (a test run's teardown drops its hundreds one by one, for seconds):
    // run again a little later rather than at once into the next one.
    await new Promise((resolve) => setTimeout(resolve, Math.min(100 * attempt, 1000)));
  }
}

/** Runs of the migrator when another schema vanished under it (otherSchemaVanished): about 5 s in all. */
const VANISHED_ATTEMPTS = 10;

/**
 * Whether every migration is recorded already, read without the migrator. Kysely's migrator takes
 * its session-level advisory lock even when there is nothing to do, and behind PgBouncer in
 * transaction mode the lock, the run and the unlock can each go to a different server connection:
 * the unlock then misses, the lock stays held on a pooled server connection, and the next instance
 * to start waits for it (an hour, Kysely's lock_timeout). Instances started behind PgBouncer after
 * `music-catalogue migrate` went directly therefore take no lock at all.
 */
async function allApplied(db: Db, schema: string): Promise<boolean> {
  const table = `${schema}.kysely_migration`;
  const { rows: exists } = await sql<{ found: boolean }>`select to_regclass(quote_ident(${schema}) || '.kysely_migration') is not null as found`.execute(db);
  if (!exists[0]?.found) return false;
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db);
  // Exactly the known ones: a migration this build does not know (a newer build ran) goes to the
  // migrator, which refuses it as before.
  const applied = new Set(rows.map((r) => r.name));
  const known = Object.keys(migrations);
  return applied.size === known.length && known.every((name) => applied.has(name));
}

/**
 * Kysely's Migrator lists the tables of every schema of the database and then names each schema in
 * further calls (pg_get_serial_sequence, has_schema_privilege); a schema dropped in between by
 * someone else (another catalogue, a test run's teardown) fails the run with 3F000 though nothing
 * of ours changed. The migrations run in one transaction, so running again is safe.
 */
function otherSchemaVanished(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '3F000';
}
