import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// Full-text search over artist, album and song names.
// SQLite: one FTS5 table kept in step by triggers; rowid = id * 4 + kind (1 artist, 2 album, 3 song),
// so each trigger touches its row by rowid. PostgreSQL: a GIN index on to_tsvector of each name.

export const SEARCHED = [
  { table: 'artists', kind: 'artist', code: 1 },
  { table: 'albums', kind: 'album', code: 2 },
  { table: 'songs', kind: 'song', code: 3 },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    for (const { table } of SEARCHED) {
      await sql`create index if not exists ${sql.id(`${table}_name_fts_idx`)} on ${sql.table(table)} using gin (to_tsvector('simple', name))`.execute(db);
    }
    return;
  }
  await sql`create virtual table search_index using fts5(name, kind unindexed, ref_id unindexed, tokenize = 'unicode61 remove_diacritics 2')`.execute(db);
  for (const { table, kind, code } of SEARCHED) {
    const t = sql.table(table);
    const k = sql.lit(kind);
    const c = sql.lit(code);
    await sql`create trigger ${sql.id(`${table}_search_insert`)} after insert on ${t} begin
      insert into search_index(rowid, name, kind, ref_id) values (new.id * 4 + ${c}, new.name, ${k}, new.id); end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_search_update`)} after update of name on ${t} begin
      update search_index set name = new.name where rowid = new.id * 4 + ${c}; end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_search_delete`)} after delete on ${t} begin
      delete from search_index where rowid = old.id * 4 + ${c}; end`.execute(db);
    await sql`insert into search_index(rowid, name, kind, ref_id) select id * 4 + ${c}, name, ${k}, id from ${t}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    for (const { table } of SEARCHED) await sql`drop index if exists ${sql.id(`${table}_name_fts_idx`)}`.execute(db);
    return;
  }
  for (const { table } of SEARCHED) {
    for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`${table}_search_${op}`)}`.execute(db);
  }
  await sql`drop table if exists search_index`.execute(db);
}
