import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { param, precompiled } from '../../db/precompiled.js';
import { listPage, type ListPlan, type ListResult } from '../../query/index.js';
import { atPath, type PathStep } from '../versioned-resource.js';
import { albumPath } from '../albums/albums.repository.js';
import { storedPatch, storedRow } from '../stored-row.js';
import { SONGS } from './songs.table.js';
import type { Album, AlbumKey } from '../albums/albums.schemas.js';
import type { CreateSongBody, Song, SongKey, UpdateSongBody } from './songs.schemas.js';

// A song is only ever addressed under its own album, itself under its own artist. Single songs are
// read with their row version (for the ETag) and written with a check of it in the same statement.

export type VersionedSong = Song & { version: number };

export const songPath = (at: SongKey): PathStep[] => [...albumPath(at), { kind: 'Song', table: 'songs', id: at.song_id, parent: 'album_id' }];

/** The album's id when it belongs to the artist (an empty set otherwise): a song's parent condition. */
const albumIdUnderArtist = (db: Db, artistId: number, albumId: number) =>
  db.selectFrom('albums').select('id').where('id', '=', albumId).where('artist_id', '=', artistId);

// POST a song checks its parent in its own INSERT: the album's id is read from albums under the
// artist, so a song is written only under an album of that artist, with no read before it (on
// PostgreSQL, a round trip per write that the batched INSERT shares with no one: it halved POST a
// song's rate there). Both forms bind the stored fields (STORED) by their names, then albumId and
// artistId, per row:
// - one song: INSERT ... SELECT from albums, no row when the album is not under the artist;
// - n concurrent songs (db/group-commit.ts, db/pg-batch.ts): each row's album_id is that lookup as a
//   scalar subquery, NULL when the album is not under the artist, which the NOT NULL column refuses.
//   The statement fails whole, and its writes then run one by one in the one-song form, so only the
//   write under a wrong path finds no album.
// A keyed POST (Idempotency-Key) writes in a transaction of its own that also stores its answer
// (http/idempotency.plugin.ts): the one-song form, outside the shared commits.

/** What a song's row stores from its body (songs.table.ts): the name, its key, the fields stored as sent. */
const STORED = ['name', 'name_key', ...SONGS.plain] as const;
type StoredSong = { name: string; name_key: string } & Pick<CreateSongBody, (typeof SONGS.plain)[number]>;

/** INSERT of one song whose album is under the artist; no row otherwise. */
const insertSong = (db: Db) =>
  db
    .insertInto('songs')
    .columns([...STORED, 'album_id'])
    .expression(
      db
        .selectFrom('albums')
        .select([...STORED.map((column) => sql<string>`${param<string>(column)}`.as(column)), 'id'])
        .where('id', '=', param<number>('albumId'))
        .where('artist_id', '=', param<number>('artistId')),
    )
    .returning(SONGS.fields);

/** INSERT of n songs, each row binding the same names as insertSong (one write's values per row). */
const insertSongs = (db: Db, n: number) =>
  db
    .insertInto('songs')
    .values(
      Array.from({ length: n }, () => ({
        ...(Object.fromEntries(STORED.map((column) => [column, param<string>(column)])) as StoredSong),
        album_id: albumIdUnderArtist(db, param<number>('artistId'), param<number>('albumId')),
      })),
    )
    .returning(SONGS.fields);

const songInsert = precompiled<Song, { albumId: number; artistId: number } & StoredSong>(insertSong, {
  groupCommit: { rows: insertSongs },
});

/**
 * POST a song is the hot write path: one precompiled statement, committed with concurrent ones (as one
 * statement). Undefined when the album is not under the artist (or either does not exist).
 */
export async function createSong(db: Db, at: AlbumKey, data: CreateSongBody): Promise<Song | undefined> {
  return songInsert.first(db, { albumId: at.album_id, artistId: at.artist_id, ...storedRow(SONGS, data) });
}

/** Several songs of the album in one INSERT (all or none), in the order sent; not batched with other writes. */
export async function createSongs(db: Db, at: AlbumKey, items: CreateSongBody[]): Promise<Song[]> {
  const rows = await db
    .insertInto('songs')
    .values(items.map((data) => ({ album_id: at.album_id, ...storedRow(SONGS, data) })))
    .returning(SONGS.fields)
    .execute();
  return inInsertOrder(rows);
}

/** What GET an album's songs answers of the album. */
export type AlbumOfSongs = Pick<Album, 'name' | 'year' | 'image'>;

/**
 * One page of an album's songs, the total the filters select and, on PostgreSQL, the album (under
 * its artist; null when there is none) read in the page's own statement with the total: one
 * statement for the request where the album, the page and a count were up to three (issue 32).
 * `album` is undefined where the page's statement did not read it (SQLite): read it with getAlbum.
 */
export async function listSongs(db: Db, at: AlbumKey, plan: ListPlan): Promise<ListResult<Song> & { album?: AlbumOfSongs | null }> {
  const base = () => db.selectFrom('songs').where('album_id', '=', param<number>('albumId'));
  const { parent, ...result } = await listPage(
    db,
    {
      key: 'songs-of-album',
      table: 'songs',
      values: { albumId: at.album_id, artistId: at.artist_id },
      base,
      rows: () => base().select(SONGS.fields),
      onePlan: true,
      parent: { columns: ALBUM_OF_SONGS, row: () => albumIdUnderArtist(db, param<number>('artistId'), param<number>('albumId')).clearSelect() as never },
      countWithPage: true,
    },
    plan,
  );
  return parent === undefined ? result : { ...result, album: parent as AlbumOfSongs | null };
}

/** The album's columns its songs' answer carries. */
const ALBUM_OF_SONGS = ['name', 'year', 'image'] as const;

const songUnderAlbum = precompiled<VersionedSong, { songId: number; albumId: number; artistId: number }>((db) =>
  db
    .selectFrom('songs')
    .select([...SONGS.fields, 'version'])
    .where('id', '=', param<number>('songId'))
    .where('album_id', 'in', albumIdUnderArtist(db, param<number>('artistId'), param<number>('albumId'))),
);

export async function getSong(db: Db, at: SongKey): Promise<VersionedSong | undefined> {
  return songUnderAlbum.first(db, { songId: at.song_id, albumId: at.album_id, artistId: at.artist_id });
}

export async function updateSong(db: Db, at: SongKey, patch: UpdateSongBody, versions: number[] | undefined): Promise<VersionedSong | undefined> {
  return db
    .updateTable('songs')
    .set((eb) => ({ ...storedPatch(SONGS, patch), version: eb('version', '+', 1) }))
    .where(atPath(songPath(at), versions))
    .returning([...SONGS.fields, 'version'])
    .executeTakeFirst();
}
