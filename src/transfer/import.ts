import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { isPostgres } from '../db/dialect.js';
import { chunks } from '../seed/seeder.js';
import { storedRow } from '../modules/stored-row.js';
import { ARTISTS } from '../modules/artists/artists.table.js';
import { ALBUMS } from '../modules/albums/albums.table.js';
import { SONGS } from '../modules/songs/songs.table.js';
import { checkRecord, describeDetail, type AlbumRecord, type ArtistRecord, type SongRecord } from './records.js';

export interface ImportProblem {
  line: number;
  message: string;
}

export type ImportResult = { ok: true; counts: { artist: number; album: number; song: number } } | { ok: false; problems: ImportProblem[] };

type Lined<T> = T & { line: number };
type Table = 'artists' | 'albums' | 'songs';

async function existingIds(db: Db, table: Table, ids: number[]): Promise<Set<number>> {
  const found = new Set<number>();
  for (const part of chunks(ids)) {
    for (const row of await db.selectFrom(table).select('id').where('id', 'in', part).execute()) found.add(row.id);
  }
  return found;
}

/**
 * Reads NDJSON catalogue records, validates every one (schema, duplicate ids, ids already stored,
 * references to parents in the file or the database) and reports each bad line by number. Only a
 * file without a single problem is written, in one transaction: all or nothing.
 */
export async function importCatalogue(db: Db, lines: AsyncIterable<string>): Promise<ImportResult> {
  const problems: ImportProblem[] = [];
  const artists: Lined<ArtistRecord>[] = [];
  const albums: Lined<AlbumRecord>[] = [];
  const songs: Lined<SongRecord>[] = [];
  const firstLine = { artist: new Map<number, number>(), album: new Map<number, number>(), song: new Map<number, number>() };

  let line = 0;
  for await (const text of lines) {
    line++;
    if (!text.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      problems.push({ line, message: 'not valid JSON' });
      continue;
    }
    const checked = checkRecord(value);
    if ('details' in checked) {
      for (const d of checked.details) problems.push({ line, message: describeDetail(d) });
      continue;
    }
    const r = checked.record;
    const seen = firstLine[r.type].get(r.id);
    if (seen !== undefined) {
      problems.push({ line, message: `id: duplicate ${r.type} id ${r.id} (first on line ${seen})` });
      continue;
    }
    firstLine[r.type].set(r.id, line);
    if (r.type === 'artist') artists.push({ ...r, line });
    else if (r.type === 'album') albums.push({ ...r, line });
    else songs.push({ ...r, line });
  }

  const stored = {
    artists: await existingIds(
      db,
      'artists',
      artists.map((r) => r.id),
    ),
    albums: await existingIds(
      db,
      'albums',
      albums.map((r) => r.id),
    ),
    songs: await existingIds(
      db,
      'songs',
      songs.map((r) => r.id),
    ),
  };
  for (const [records, table] of [
    [artists, 'artists'],
    [albums, 'albums'],
    [songs, 'songs'],
  ] as const) {
    for (const r of records) if (stored[table].has(r.id)) problems.push({ line: r.line, message: `id: ${r.type} ${r.id} already exists in the database` });
  }
  const parentArtists = await existingIds(
    db,
    'artists',
    [...new Set(albums.map((a) => a.artist_id))].filter((id) => !firstLine.artist.has(id)),
  );
  for (const a of albums) {
    if (!firstLine.artist.has(a.artist_id) && !parentArtists.has(a.artist_id))
      problems.push({ line: a.line, message: `artist_id: artist ${a.artist_id} is neither in the file nor in the database` });
  }
  const parentAlbums = await existingIds(
    db,
    'albums',
    [...new Set(songs.map((s) => s.album_id))].filter((id) => !firstLine.album.has(id)),
  );
  for (const s of songs) {
    if (!firstLine.album.has(s.album_id) && !parentAlbums.has(s.album_id))
      problems.push({ line: s.line, message: `album_id: album ${s.album_id} is neither in the file nor in the database` });
  }
  if (problems.length) return { ok: false, problems: problems.sort((a, b) => a.line - b.line) };

  await db.transaction().execute(async (trx) => {
    for (const part of chunks(artists))
      await trx
        .insertInto('artists')
        .values(part.map((r) => ({ id: r.id, ...storedRow(ARTISTS, r) })))
        .execute();
    for (const part of chunks(albums)) {
      await trx
        .insertInto('albums')
        .values(part.map((r) => ({ id: r.id, artist_id: r.artist_id, ...storedRow(ALBUMS, r) })))
        .execute();
    }
    for (const part of chunks(songs))
      await trx
        .insertInto('songs')
        .values(part.map((r) => ({ id: r.id, album_id: r.album_id, ...storedRow(SONGS, r) })))
        .execute();
    if (isPostgres(trx)) {
      // Explicit ids do not move an identity sequence; without this the next API insert would collide.
      for (const table of ['artists', 'albums', 'songs'] as const) {
        await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(trx);
      }
    }
  });
  return { ok: true, counts: { artist: artists.length, album: albums.length, song: songs.length } };
}
