import { sql, type Kysely, type RawBuilder } from 'kysely';
import type SQLite from 'better-sqlite3';
import { prepared } from './precompiled.js';
import { VERSIONED_TABLES, type VersionedTable } from './versioned-tables.js';
import { readTable } from './reads.js';
import { isPostgres } from './dialect.js';
import { rowsOf } from './pg-direct.js';
import type { TableVersions } from './versions-rider.js';

// What says that a table is as it was: the one place for it (which backend: db/dialect.ts).
//
// Everything this service remembers about the data (cached answers, exact totals, page boundaries)
// is remembered per table, under that table's version, kept by triggers in the very transaction of
// each write:
// - SQLite: table_versions, a row per table (migration 20261124T0100);
// - PostgreSQL: table_version_slots (migration 20261126T0300), a column per table in SLOTS rows, one
//   of which each write statement moves (one nobody else holds: no writer waits on another for it);
//   the version is the column's sum, one more with every committed write statement. Read in one pass
//   over the rows (a few dozen microseconds), as a column per table or as one summed row.
// A remembered thing is used only while the versions of the tables it was read from are still the
// ones it was stored under, so it is always what the database would answer now; a song written
// leaves what is known about users alone.
// - A version is read before the data it stamps (or in the same statement, on PostgreSQL): whatever
//   is stored is then at least as new as its stamp, and a newer stamp never matches it.
// - It is committed with the write: a commit by another process or instance moves it for every
//   reader at once, on SQLite (WAL) as on PostgreSQL.
// - Whoever reads a table's version for a request is about to use something of that table (rows, or
//   what is remembered of them), so the table joins what the request's answer read (db/reads.ts):
//   a total or a summary answered from memory is a dependency as much as a statement is.

export { VERSIONED_TABLES, type VersionedTable };

export type { TableVersions };

const ALL_VERSIONS = 'select name, version from table_versions';
/** PostgreSQL: every table's version as one summed row (the column names are the tables': read for a request, it would count as reading them all). */
const ALL_SUMS = `select ${VERSIONED_TABLES.map((t) => `sum(${t}) as ${t}`).join(', ')} from table_version_slots`;
/** PostgreSQL: one table's version (the table name is one of ours, never a request's: written into the text, where db/reads.ts finds it). */
const sumOf = (table: VersionedTable) => `select sum(${table}) as version from table_version_slots`;

function versionsOf(rows: { name: string; version: unknown }[]): TableVersions {
  return new Map(rows.map((r) => [r.name, String(r.version)]));
}

/** Every table's version, in one statement (SQLite: synchronous, a few microseconds). */
export function sqliteTableVersions(handle: SQLite.Database): TableVersions {
  return versionsOf(prepared(handle, ALL_VERSIONS).all() as { name: string; version: unknown }[]);
}

/** Every table's version, in one statement (either backend). */
export async function tableVersions(db: Kysely<unknown>): Promise<TableVersions> {
  if (!isPostgres(db)) return versionsOf((await sql<{ name: string; version: unknown }>`${sql.raw(ALL_VERSIONS)}`.execute(db)).rows);
  const row = (await rowsOf<Record<string, unknown>>(db, ALL_SUMS, []))[0] ?? {};
  return new Map(VERSIONED_TABLES.map((t) => [t, String(row[t])]));
}

/** The stamp of `tables` in `versions`: equal stamps, same rows in those tables. */
export function stampOf(versions: TableVersions, tables: readonly VersionedTable[]): string {
  let out = '';
  for (const table of tables) out += `${versions.get(table) ?? '-'};`;
  return out;
}

/** One table's version on SQLite (synchronous). */
export function sqliteTableStamp(handle: SQLite.Database, table: VersionedTable): string {
  readTable(table);
  const row = prepared(handle, 'select version from table_versions where name = ?').get(table) as { version: number } | undefined;
  return `${row?.version ?? '-'};`;
}

/** One table's version through Kysely (any backend, inside a transaction too). */
export async function tableStamp(db: Pick<Kysely<unknown>, 'getExecutor'>, table: VersionedTable): Promise<string> {
  readTable(table);
  const { rows } = isPostgres(db)
    ? await sql<{ version: number | string }>`${sql.raw(sumOf(table))}`.execute(db)
    : await sql<{ version: number | string }>`select version from table_versions where name = ${table}`.execute(db);
  return `${rows[0]?.version ?? '-'};`;
}

/**
 * The version of `table` as a column of another statement, read in that statement's own snapshot
 * (the rows and their stamp belong to one state of the data, on PostgreSQL as on SQLite). The table name is one of
 * ours, never a request's, so it is written into the text (where db/reads.ts finds it too).
 */
export function tableStampSql(db: Pick<Kysely<unknown>, 'getExecutor'>, table: VersionedTable): RawBuilder<string> {
  if (isPostgres(db)) return postgresTableStampSql(table);
  return sql<string>`(select cast(version as text) || ';' from table_versions where name = ${sql.lit(table)})`;
}

/** tableStampSql on PostgreSQL (for statements only PostgreSQL runs). */
export function postgresTableStampSql(table: VersionedTable): RawBuilder<string> {
  return sql<string>`(select cast(sum(${sql.raw(table)}) as text) || ';' from table_version_slots)`;
}
