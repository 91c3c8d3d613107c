import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// A collation named "binary" on PostgreSQL, so one SQL text means the same on both backends:
// `lower(col collate "binary")` folds ASCII only and compares by code point. SQLite has BINARY
// built in; on PostgreSQL a libc collation with locale C has exactly that behaviour, whatever the
// database's own locale. Used through src/db/sql.ts.

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create collation if not exists "binary" (provider = libc, locale = 'C')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop collation if exists "binary"`.execute(db);
}
