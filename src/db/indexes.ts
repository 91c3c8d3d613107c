import { sql, type Kysely } from 'kysely';
import { foldSummaries } from './summary-folder.js';
import { isPostgres } from './dialect.js';
import type { Db } from './database.js';

export interface IndexDefinition {
  name: string;
  /** The CREATE INDEX statement as the database itself reports it. */
  sql: string;
}

/**
 * After a bulk load: statistics for the planner (both backends), and on PostgreSQL the visibility map
 * too (VACUUM), without which an index-only scan still visits the table for every row. Run by seed
 * and import, never while serving (VACUUM FULL locks the small tables it rewrites).
 */
export async function refreshStatistics(db: Db): Promise<void> {
  if (!isPostgres(db)) {
    await sql`analyze`.execute(db);
    return;
  }
  // Every row of the load wrote its event unnumbered (events_pending); published here, before the
  // rewrite below, or the service's first publish deletes them all and leaves the table's heap at the
  // load's size (540 MB on the bench's million users), which plain VACUUM cannot shrink while
  // publishes hold the table and every publish's delete then reads whole (180-260 ms each).
  await db
    .transaction()
    .setIsolationLevel('read committed')
    .execute((trx) => sql`select events_publish()`.execute(trx));
  // The summary and version tables had a row version per write statement of the load: rewritten
  // to their few live rows, or every total reads megabytes of dead ones until autovacuum catches up.
  // The summaries' deltas (one row per key per statement of the load) folded in first.
  await foldSummaries(db as unknown as Kysely<unknown>);
  for (const table of [
    'events_pending',
    'users_counts_folded',
    'users_counts_delta',
    'users_name_counts_folded',
    'users_name_counts_delta',
    'table_version_slots',
  ]) {
    await sql`vacuum (full, analyze) ${sql.table(table)}`.execute(db);
  }
  await sql`vacuum analyze`.execute(db);
}

/**
 * The secondary indexes of `table` (not the primary key, nor indexes that back a constraint), as
 * the statements that create them: what a bulk load drops and builds again.
 */
export async function indexDefinitions(db: Db, table: string): Promise<IndexDefinition[]> {
  if (!isPostgres(db)) {
    // Indexes SQLite makes for PRIMARY KEY/UNIQUE constraints have no sql.
    const { rows } = await sql<IndexDefinition>`
      select name, sql from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null order by name`.execute(db);
    return rows;
  }
  const { rows } = await sql<IndexDefinition>`
    select i.indexname as name, i.indexdef as sql
    from pg_indexes i
    where i.schemaname = current_schema() and i.tablename = ${table}
      and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.connamespace = current_schema()::regnamespace)
    order by i.indexname`.execute(db);
  return rows;
}
