import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

// Helpers that keep migrations identical on SQLite and PostgreSQL. The dialect test has one home,
// db/dialect.ts (re-exported for the shipped migrations, which import it from here); runtime code
// imports it from there, never from a migration's folder.
export { isPostgres };

/** An auto-assigned integer primary key: AUTOINCREMENT on SQLite (ids never reused), identity on PostgreSQL. */
export function primaryId(db: Kysely<unknown>) {
  const pg = isPostgres(db);
  return (col: ColumnDefinitionBuilder) => (pg ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement());
}
