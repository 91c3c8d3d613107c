import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// PostgreSQL only. The users indexes hold folded text (`lower(country collate "binary")`), and
// PostgreSQL answers from an index alone (an index-only scan, no visit to the table) only when every
// column the query names is in it: a filter on `lower(country)` names `country`, which the index holds
// only folded. So a country's users in id order, a page 436 deep, were found by a bitmap scan of the
// country and sorted (43 ms on a million users) rather than walked in the country index's order from
// the index alone (7 ms). Each index that holds a column folded also carries the column itself
// (INCLUDE: stored, not a key, so the order is unchanged). SQLite reads folded expressions from the
// index as they are (its plans say COVERING INDEX), so nothing changes there.

interface IndexRow {
  name: string;
  def: string;
}

/** The users indexes that hold a folded column (not unique ones), as PostgreSQL reports them. */
async function foldingIndexes(db: Kysely<unknown>): Promise<IndexRow[]> {
  const { rows } = await sql<IndexRow>`
    select i.indexname as name, i.indexdef as def from pg_indexes i
    where i.schemaname = current_schema() and i.tablename = 'users' and i.indexdef like '%lower(%' and i.indexdef not like 'CREATE UNIQUE%'
    order by i.indexname`.execute(db);
  return rows;
}

/** The columns an index definition folds, in order of first appearance. */
function foldedColumns(def: string): string[] {
  return [...new Set([...def.matchAll(/lower\(\(?(\w+)/g)].map((m) => m[1]!))];
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const { name, def } of await foldingIndexes(db)) {
    if (/ INCLUDE /i.test(def)) continue;
    await sql`drop index ${sql.id(name)}`.execute(db);
    await sql.raw(`${def} include (${foldedColumns(def).join(', ')})`).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const { name, def } of await foldingIndexes(db)) {
    if (!/ INCLUDE /i.test(def)) continue;
    await sql`drop index ${sql.id(name)}`.execute(db);
    await sql.raw(def.replace(/ INCLUDE \([^)]*\)$/i, '')).execute(db);
  }
}
