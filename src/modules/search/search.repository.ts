import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { isPostgres } from '../../db/dialect.js';
import { fts5Match, tsqueryText } from '../../query/text.js';
import { searchedFoldSql } from '../../db/collation.js';
import type { SearchHit } from './search.schemas.js';

export { searchTerms } from '../../query/text.js';

// The order of hits is computed from each hit's own name and the query, never from the rest of the
// index: a relevance that reads corpus statistics (bm25's idf and average length on SQLite) moves
// with every write, so a cursor holding it lands elsewhere after one, repeating and skipping hits.
// A hit's sort key is (quality, length, kind code, id), all integers. Its quality says how the
// name's words (runs of letters and digits) meet the query's words q1..qk, best first:
//   0  the name is the query: it starts with q1..qk as whole words and is exactly as long as
//      "q1 ... qk" (only case and accents differ, which the match ignores)
//   1  the name starts with q1..qk, in order, as whole words
//   2  the name starts with them, the last one as a prefix (a typeahead's "starts with")
//   3  any other hit: every word of q starts some word of the name
// then shorter names first (characters), then artists, albums, songs, then by id. A cursor is the
// key of the last hit shown and the next page the hits past it: a hit keeps its key until it is
// renamed, so one that stays while others are written, renamed or deleted is passed exactly once.
// Both backends match the names' folds (src/db/collation.ts; the search indexes hold them, migration
// 20261126T0100) with the query's words folded alike (query/text.ts searchTerms): "vini" finds
// "Vinícius", "strasse" "Straße", on SQLite and PostgreSQL the same.

interface Row {
  code: number;
  id: number;
  name: string;
  artist_id: number | null;
  album_id: number | null;
  quality: number;
  len: number;
  total: number | string;
}

function toHit(r: Row): SearchHit {
  const id = Number(r.id);
  const code = Number(r.code);
  if (code === 1) return { kind: 'artist', id, name: r.name, path: `/artists/${id}` };
  if (code === 2) return { kind: 'album', id, name: r.name, path: `/artists/${r.artist_id}/albums/${id}` };
  return { kind: 'song', id, name: r.name, path: `/artists/${r.artist_id}/albums/${r.album_id}/songs/${id}` };
}

/** Where a cursor page of hits starts: the sort key of the last hit shown (see above). */
export type SearchAfter = [quality: number, length: number, code: number, id: number];

/** Before every key: a first page. */
const START: SearchAfter = [-1, -1, -1, -1];

/**
 * Hits in their order (above) and the total, one page at a time: `offset` hits skipped, or
 * (`after`) the hits that follow that key. `keys` are the hits' own (cursors). Every hit is found
 * to know the total, so a cursor saves sending the skipped hits, not finding them.
 */
export async function search(
  db: Db,
  terms: string[],
  limit: number,
  offset: number,
  after?: SearchAfter,
): Promise<{ hits: SearchHit[]; total: number; keys: SearchAfter[] }> {
  const run = isPostgres(db) ? searchPostgres : searchSqlite;
  const rows = await run(db, terms, limit, offset, after ?? START);
  if (rows.length === 0) {
    // A page past the end still reports the total.
    return { hits: [], total: offset === 0 && !after ? 0 : await countOnly(db, terms), keys: [] };
  }
  return {
    hits: rows.map(toHit),
    total: Number(rows[0]!.total),
    keys: rows.map((r) => [Number(r.quality), Number(r.len), Number(r.code), Number(r.id)]),
  };
}

async function countOnly(db: Db, terms: string[]): Promise<number> {
  const rows = isPostgres(db) ? await searchPostgres(db, terms, 1, 0, START) : await searchSqlite(db, terms, 1, 0, START);
  return rows.length ? Number(rows[0]!.total) : 0;
}

/** How many characters (code points, as SQL length() counts them) "q1 ... qk" has: a name of quality 0 has as many. */
const queryLength = (terms: readonly string[]) => [...terms.join(' ')].length;

/** The hits past `after` in key order. */
const pastKey = ([quality, len, code, id]: SearchAfter) => sql`(h.quality, h.len, h.code, h.id) > (${quality}, ${len}, ${code}, ${id})`;

async function searchSqlite(db: Db, terms: string[], limit: number, offset: number, after: SearchAfter): Promise<Row[]> {
  // The index is contentless: the rowid is id * 4 + kind code (1 artist, 2 album, 3 song), the
  // names come from their tables. FTS5's `^` anchors a phrase at the first word of the name, and a
  // trailing `*` makes its last word a prefix; each set is read from the index once per statement.
  // Terms are runs of letters and digits: nothing in them is FTS5 syntax.
  const phrase = `^"${terms.join(' ')}"`;
  const result = await sql<Row>`
    select * from (
      select s.code as code, s.ref_id as id, coalesce(ar.name, al.name, so.name) as name,
             coalesce(al.artist_id, sal.artist_id) as artist_id, so.album_id as album_id,
             case when s.rid not in (select rowid from search_index where search_index match ${`${phrase}*`}) then 3
                  when s.rid not in (select rowid from search_index where search_index match ${phrase}) then 2
                  when length(coalesce(ar.name, al.name, so.name)) = ${queryLength(terms)} then 0
                  else 1 end as quality,
             length(coalesce(ar.name, al.name, so.name)) as len, count(*) over () as total
      from (select rowid as rid, rowid % 4 as code, rowid / 4 as ref_id from search_index where search_index match ${fts5Match(terms)}) s
      left join artists ar on s.code = 1 and ar.id = s.ref_id
      left join albums al on s.code = 2 and al.id = s.ref_id
      left join songs so on s.code = 3 and so.id = s.ref_id
      left join albums sal on sal.id = so.album_id
    ) h
    where ${pastKey(after)}
    order by h.quality, h.len, h.code, h.id
    limit ${limit} offset ${offset}`.execute(db);
  return result.rows;
}

/** PostgreSQL: what the search index holds for a row of `alias` (its name's fold), as the GIN index's expression writes it. */
const folded = (alias: string) => sql.raw(searchedFoldSql(`${alias}.name_key`, true));

async function searchPostgres(db: Db, terms: string[], limit: number, offset: number, after: SearchAfter): Promise<Row[]> {
  // How a name starts is read with regular expressions on the name's fold (what the index holds, in
  // the database's own collation: under "binary" [[:alnum:]] would be ASCII only), words being runs
  // of letters and digits as on SQLite: a name "starts with" q1..qk when, past any leading non-word
  // characters, q1, non-word characters, q2, ..., qk follow; "as whole words" when nothing but the
  // end or a non-word character follows. (PostgreSQL's text search parser would read "Jay-Z" or
  // "AC/DC" as one compound token; and an anchored expression costs less per hit than a second
  // tsvector.) Terms are runs of letters and digits: nothing in them is regular expression syntax.
  const starts = `^[^[:alnum:]]*${terms.join('[^[:alnum:]]+')}`;
  const q = tsqueryText(terms);
  const result = await sql<Row>`
    select * from (
      select h.code, h.id, h.name, h.artist_id, h.album_id,
             case when h.fold !~* ${starts} then 3 when h.fold !~* ${`${starts}($|[^[:alnum:]])`} then 2
                  when char_length(h.name) = ${queryLength(terms)} then 0 else 1 end as quality,
             char_length(h.name) as len, count(*) over () as total
      from (
        select 1 as code, a.id, a.name, ${folded('a')} collate "default" as fold, null::integer as artist_id, null::integer as album_id
        from artists a, to_tsquery('simple', ${q}) q where to_tsvector('simple', ${folded('a')}) @@ q
        union all
        select 2, al.id, al.name, ${folded('al')} collate "default", al.artist_id, null
        from albums al, to_tsquery('simple', ${q}) q where to_tsvector('simple', ${folded('al')}) @@ q
        union all
        select 3, so.id, so.name, ${folded('so')} collate "default", al.artist_id, so.album_id
        from songs so join albums al on al.id = so.album_id, to_tsquery('simple', ${q}) q
        where to_tsvector('simple', ${folded('so')}) @@ q
      ) h
    ) h
    where ${pastKey(after)}
    order by h.quality, h.len, h.code, h.id
    limit ${limit} offset ${offset}`.execute(db);
  return result.rows;
}
