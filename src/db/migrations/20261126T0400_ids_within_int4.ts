import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// Ids stay within 1..2147483647's upper bound on SQLite as on PostgreSQL. PostgreSQL's integer id
// column refuses a larger id (int4); SQLite's takes any 64-bit integer, and a row written by hand
// (sqlite3) with an id past 2^31 made AUTOINCREMENT number every later row after it: ids the API
// hands out but cannot take back in a path (`Id`, src/schemas.ts) or a cursor. These triggers refuse
// such an id when it is written, as PostgreSQL does; rows stored before them are kept as they are
// (and answered as stored: answerSchema, src/validation.ts).
export const ID_TABLES = ['artists', 'albums', 'songs', 'users', 'tokens', 'webhooks'] as const;
const MAX_ID = 2147483647;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  for (const table of ID_TABLES) {
    for (const [event, name] of [
      ['insert', `${table}_id_within_int4_insert`],
      ['update of id', `${table}_id_within_int4_update`],
    ] as const) {
      await sql
        .raw(
          `create trigger ${name} before ${event} on ${table} when new.id > ${MAX_ID} ` +
            `begin select raise(abort, 'id out of range: ${table}.id takes 1..${MAX_ID}'); end`,
        )
        .execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  for (const table of ID_TABLES) {
    await sql.raw(`drop trigger if exists ${table}_id_within_int4_insert`).execute(db);
    await sql.raw(`drop trigger if exists ${table}_id_within_int4_update`).execute(db);
  }
}
