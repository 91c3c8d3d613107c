import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';
import { SEARCHED } from './20261122T0300_search.js';

// SQLite's search index becomes contentless: it keeps only the index (and the row sizes bm25
// needs), not a second copy of every name with its kind and id. The rowid already encodes both
// (id * 4 + kind code) and the names are in their own tables, so the search query joins them
// back. A write then stores one row less per name: the songs write path (trigger included) does
// about a third less work per commit. PostgreSQL indexes the tables' own columns and is unchanged.

const CONTENTLESS = sql`fts5(name, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2')`;
/** As 20261122T0300_search made it: the names stored again in the index, with kind and id. */
const WITH_CONTENT = sql`fts5(name, kind unindexed, ref_id unindexed, tokenize = 'unicode61 remove_diacritics 2')`;

async function rebuild(db: Kysely<unknown>, contentless: boolean): Promise<void> {
  for (const { table } of SEARCHED) {
    for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`${table}_search_${op}`)}`.execute(db);
  }
  await sql`drop table if exists search_index`.execute(db);
  await sql`create virtual table search_index using ${contentless ? CONTENTLESS : WITH_CONTENT}`.execute(db);
  for (const { table, kind, code } of SEARCHED) {
    const t = sql.table(table);
    const c = sql.lit(code);
    const extra = contentless ? sql`` : sql`, kind, ref_id`;
    const extraNew = contentless ? sql`` : sql`, ${sql.lit(kind)}, new.id`;
    await sql`create trigger ${sql.id(`${table}_search_insert`)} after insert on ${t} begin
      insert into search_index(rowid, name${extra}) values (new.id * 4 + ${c}, new.name${extraNew}); end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_search_update`)} after update of name on ${t} begin
      update search_index set name = new.name where rowid = new.id * 4 + ${c}; end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_search_delete`)} after delete on ${t} begin
      delete from search_index where rowid = old.id * 4 + ${c}; end`.execute(db);
    const extraSelect = contentless ? sql`` : sql`, ${sql.lit(kind)}, id`;
    await sql`insert into search_index(rowid, name${extra}) select id * 4 + ${c}, name${extraSelect} from ${t}`.execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await rebuild(db, true);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await rebuild(db, false);
}
