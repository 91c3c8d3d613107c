import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { isPostgres } from '../../db/migrations/util.js';
import { fts5Match, tsqueryText } from '../../query/text.js';
import type { SearchHit } from './search.schemas.js';

export { searchTerms } from '../../query/text.js';

interface Row {
  kind: 'artist' | 'album' | 'song';
  id: number;
  name: string;
  artist_id: number | null;
  album_id: number | null;
  rank: number;
  code: number;
  total: number | string;
}

function toHit(r: Row): SearchHit {
  const id = Number(r.id);
  if (r.kind === 'artist') return { kind: 'artist', id, name: r.name, path: `/artists/${id}` };
  if (r.kind === 'album') return { kind: 'album', id, name: r.name, path: `/artists/${r.artist_id}/albums/${id}` };
  return { kind: 'song', id, name: r.name, path: `/artists/${r.artist_id}/albums/${r.album_id}/songs/${id}` };
}

/** Where a cursor page of hits starts: the rank, kind code and id of the last hit shown. */
export type SearchAfter = [rank: number, code: number, id: number];

/**
 * Ranked hits (best first; ties by kind, then id) and the total, one page at a time: `offset` hits
 * skipped, or (`after`) the hits that follow that one in the ranking. `keys` are the hits' own (cursors). Every hit is ranked to know the total, so a cursor saves
 * sending the skipped hits, not finding them.
 */
export async function search(
  db: Db,
  terms: string[],
  limit: number,
  offset: number,
  after?: SearchAfter,
): Promise<{ hits: SearchHit[]; total: number; keys: SearchAfter[] }> {
  const run = isPostgres(db) ? searchPostgres : searchSqlite;
  const rows = await run(db, terms, limit, offset, after);
  if (rows.length === 0) {
    // A page past the end still reports the total.
    return { hits: [], total: offset === 0 && !after ? 0 : await countOnly(db, terms), keys: [] };
  }
  return { hits: rows.map(toHit), total: Number(rows[0]!.total), keys: rows.map((r) => [Number(r.rank), Number(r.code), Number(r.id)]) };
}

async function countOnly(db: Db, terms: string[]): Promise<number> {
  const rows = isPostgres(db) ? await searchPostgres(db, terms, 1, 0) : await searchSqlite(db, terms, 1, 0);
  return rows.length ? Number(rows[0]!.total) : 0;
}

/** The hits past `after` in the order rank (`better`: which way is better), code, id; all hits without it. */
function pastHit(after: SearchAfter | undefined, better: '<' | '>') {
  if (!after) return sql`1 = 1`;
  const [rank, code, id] = after;
  return sql`(h.rank ${sql.raw(better)} ${rank} or (h.rank = ${rank} and (h.code > ${code} or (h.code = ${code} and h.id > ${id}))))`;
}

async function searchSqlite(db: Db, terms: string[], limit: number, offset: number, after?: SearchAfter): Promise<Row[]> {
  const match = fts5Match(terms);
  // The index is contentless: the rowid is id * 4 + kind code (1 artist, 2 album, 3 song), the
  // names come from their tables. bm25: lower is better.
  const result = await sql<Row>`
    select * from (
      select case s.code when 1 then 'artist' when 2 then 'album' else 'song' end as kind, s.ref_id as id,
             coalesce(ar.name, al.name, so.name) as name,
             coalesce(al.artist_id, sal.artist_id) as artist_id, so.album_id as album_id,
             s.rank as rank, s.code as code, count(*) over () as total
      from (select rowid % 4 as code, rowid / 4 as ref_id, bm25(search_index) as rank from search_index where search_index match ${match}) s
      left join artists ar on s.code = 1 and ar.id = s.ref_id
      left join albums al on s.code = 2 and al.id = s.ref_id
      left join songs so on s.code = 3 and so.id = s.ref_id
      left join albums sal on sal.id = so.album_id
    ) h
    where ${pastHit(after, '>')}
    order by h.rank, h.code, h.id
    limit ${limit} offset ${offset}`.execute(db);
  return result.rows;
}

async function searchPostgres(db: Db, terms: string[], limit: number, offset: number, after?: SearchAfter): Promise<Row[]> {
  const query = tsqueryText(terms);
  // ts_rank is a real; as float8 its text form reads back exactly, so a cursor compares equal to it.
  const result = await sql<Row>`
    with hits as (
      select 'artist' as kind, 1 as code, a.id, a.name, null::integer as artist_id, null::integer as album_id,
             ts_rank(to_tsvector('simple', a.name), q)::float8 as rank
      from artists a, to_tsquery('simple', ${query}) q where to_tsvector('simple', a.name) @@ q
      union all
      select 'album', 2, al.id, al.name, al.artist_id, null, ts_rank(to_tsvector('simple', al.name), q)::float8
      from albums al, to_tsquery('simple', ${query}) q where to_tsvector('simple', al.name) @@ q
      union all
      select 'song', 3, so.id, so.name, al.artist_id, so.album_id, ts_rank(to_tsvector('simple', so.name), q)::float8
      from songs so join albums al on al.id = so.album_id, to_tsquery('simple', ${query}) q
      where to_tsvector('simple', so.name) @@ q
    )
    select kind, id, name, artist_id, album_id, rank, code, total
    from (select *, count(*) over () as total from hits) h
    where ${pastHit(after, '<')}
    order by rank desc, code, id
    limit ${limit} offset ${offset}`.execute(db);
  return result.rows;
}
