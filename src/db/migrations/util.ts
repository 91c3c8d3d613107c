import { PostgresAdapter, type ColumnDefinitionBuilder, type Kysely } from 'kysely';

// Helpers that keep migrations identical on SQLite and PostgreSQL.

/** Works on any Kysely handle or transaction, whatever its table types. */
export function isPostgres(db: Pick<Kysely<unknown>, 'getExecutor'>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An auto-assigned integer primary key: AUTOINCREMENT on SQLite (ids never reused), identity on PostgreSQL. */
export function primaryId(db: Kysely<unknown>) {
  const pg = isPostgres(db);
  return (col: ColumnDefinitionBuilder) => (pg ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement());
}
