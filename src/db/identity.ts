import { sql } from 'kysely';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';

// PostgreSQL's identity columns take their next id from a sequence, which a row written by hand with
// an id of its own (psql: insert into users (id, ...) values (1000, ...)) does not move: when the
// sequence reaches that id, the API's insert hits the primary key (a 409 it did not deserve, once per
// such id). SQLite's AUTOINCREMENT takes the largest id plus one and never meets a taken id.

interface PgUniqueError {
  code?: unknown;
  table?: unknown;
  constraint?: unknown;
}

/** The table whose primary key an insert met (PostgreSQL 23505 on `<table>_pkey`), else undefined. */
export function takenIdTable(db: Db, err: unknown): string | undefined {
  if (!isPostgres(db)) return undefined;
  const e = err as PgUniqueError | null;
  if (e?.code !== '23505' || typeof e.table !== 'string' || e.constraint !== `${e.table}_pkey`) return undefined;
  return e.table;
}

/**
 * Moves the table's id sequence past every stored id (never back: past its own next value too, which
 * an insert not yet committed may hold), so the next insert takes a free id.
 */
export async function passTakenIds(db: Db, table: string): Promise<void> {
  await sql`select setval(pg_get_serial_sequence(${table}, 'id'), greatest((select coalesce(max(id), 0) from ${sql.table(table)}), nextval(pg_get_serial_sequence(${table}, 'id'))))`.execute(
    db,
  );
}

/** Runs an insert, and again (up to a few times) after passing the ids written by hand that it met. */
export async function withFreeIds<T>(db: Db, insert: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await insert();
    } catch (err) {
      const table = takenIdTable(db, err);
      if (table === undefined || attempt >= 3) throw err;
      await passTakenIds(db, table);
    }
  }
}
