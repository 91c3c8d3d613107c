import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { isPostgres } from '../../db/migrations/util.js';
import type { SearchHit } from './search.schemas.js';

/** The words of a query: runs of letters and digits. Nothing else of the input reaches the SQL text. */
export function searchTerms(q: string): string[] {
  return (q.normalize('NFC').match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}

interface Row {
  kind: 'artist' | 'album' | 'song';
  id: number;
  name: string;
  artist_id: number | null;
  album_id: number | null;
  total: number | string;
}

function toHit(r: Row): SearchHit {
  const id = Number(r.id);
  if (r.kind === 'artist') return { kind: 'artist', id, name: r.name, path: `/artists/${id}` };
  if (r.kind === 'album') return { kind: 'album', id, name: r.name, path: `/artists/${r.artist_id}/albums/${id}` };
  return { kind: 'song', id, name: r.name, path: `/artists/${r.artist_id}/albums/${r.album_id}/songs/${id}` };
}

/** Ranked hits (best first; ties by kind, then id) and the total, one page at a time. */
export async function search(db: Db, terms: string[], limit: number, offset: number): Promise<{ hits: SearchHit[]; total: number }> {
  const rows = isPostgres(db) ? await searchPostgres(db, terms, limit, offset) : await searchSqlite(db, terms, limit, offset);
  if (rows.length === 0) {
    // A page past the end still reports the total.
    return { hits: [], total: offset === 0 ? 0 : await countOnly(db, terms) };
  }
  return { hits: rows.map(toHit), total: Number(rows[0]!.total) };
}

async function countOnly(db: Db, terms: string[]): Promise<number> {
  const rows = isPostgres(db) ? await searchPostgres(db, terms, 1, 0) : await searchSqlite(db, terms, 1, 0);
  return rows.length ? Number(rows[0]!.total) : 0;
}

async function searchSqlite(db: Db, terms: string[], limit: number, offset: number): Promise<Row[]> {
  // Each term as a quoted FTS5 prefix query: operators or syntax in the input have no effect.
  const match = terms.map((t) => `"${t}"*`).join(' ');
  // The index is contentless: the rowid is id * 4 + kind code (1 artist, 2 album, 3 song), the
  // names come from their tables.
  const result = await sql<Row>`
    select case s.code when 1 then 'artist' when 2 then 'album' else 'song' end as kind, s.ref_id as id,
           coalesce(ar.name, al.name, so.name) as name,
           coalesce(al.artist_id, sal.artist_id) as artist_id, so.album_id as album_id,
           count(*) over () as total
    from (select rowid % 4 as code, rowid / 4 as ref_id, bm25(search_index) as rank from search_index where search_index match ${match}) s
    left join artists ar on s.code = 1 and ar.id = s.ref_id
    left join albums al on s.code = 2 and al.id = s.ref_id
    left join songs so on s.code = 3 and so.id = s.ref_id
    left join albums sal on sal.id = so.album_id
    order by s.rank, s.code, s.ref_id
    limit ${limit} offset ${offset}`.execute(db);
  return result.rows;
}

async function searchPostgres(db: Db, terms: string[], limit: number, offset: number): Promise<Row[]> {
  const query = terms.map((t) => `${t}:*`).join(' & ');
  const result = await sql<Row>`
    with hits as (
      select 'artist' as kind, 1 as code, a.id, a.name, null::integer as artist_id, null::integer as album_id,
             ts_rank(to_tsvector('simple', a.name), q) as rank
      from artists a, to_tsquery('simple', ${query}) q where to_tsvector('simple', a.name) @@ q
      union all
      select 'album', 2, al.id, al.name, al.artist_id, null, ts_rank(to_tsvector('simple', al.name), q)
      from albums al, to_tsquery('simple', ${query}) q where to_tsvector('simple', al.name) @@ q
      union all
      select 'song', 3, so.id, so.name, al.artist_id, so.album_id, ts_rank(to_tsvector('simple', so.name), q)
      from songs so join albums al on al.id = so.album_id, to_tsquery('simple', ${query}) q
      where to_tsvector('simple', so.name) @@ q
    )
    select kind, id, name, artist_id, album_id, count(*) over () as total
    from hits order by rank desc, code, id
    limit ${limit} offset ${offset}`.execute(db);
  return result.rows;
}
