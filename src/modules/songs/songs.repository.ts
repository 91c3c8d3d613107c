import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { param, precompiled } from '../../db/precompiled.js';
import { listPage, type ListPlan, type ListResult } from '../../query/index.js';
import { atPath, type PathStep } from '../versioned-resource.js';
import { albumPath } from '../albums/albums.repository.js';
import { storedName } from '../../db/collation.js';
import type { AlbumKey } from '../albums/albums.schemas.js';
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
// song's rate there). Both forms bind name, nameKey, time, albumId, artistId per row, in that order:
// - one song: INSERT ... SELECT from albums, no row when the album is not under the artist;
// - n concurrent songs (db/group-commit.ts, db/pg-batch.ts): each row's album_id is that lookup as a
//   scalar subquery, NULL when the album is not under the artist, which the NOT NULL column refuses.
//   The statement fails whole, and its writes then run one by one in the one-song form, so only the
//   write under a wrong path finds no album.
// A keyed POST (Idempotency-Key) writes in a transaction of its own that also stores its answer
// (http/idempotency.plugin.ts): the one-song form, outside the shared commits.

/** INSERT of one song whose album is under the artist; no row otherwise. */
const insertSong = (db: Db) =>
  db
    .insertInto('songs')
    .columns(['name', 'name_key', 'time', 'album_id'])
    .expression(
      db
        .selectFrom('albums')
        .select([
          sql<string>`${param<string>('name')}`.as('name'),
          sql<string>`${param<string>('nameKey')}`.as('name_key'),
          sql<string>`${param<string>('time')}`.as('time'),
          'id',
        ])
        .where('id', '=', param<number>('albumId'))
        .where('artist_id', '=', param<number>('artistId')),
    )
    .returning(['id', 'name', 'time']);

/** INSERT of n songs, each row binding the same names as insertSong (one write's values per row). */
const insertSongs = (db: Db, n: number) =>
  db
    .insertInto('songs')
    .values(
      Array.from({ length: n }, () => ({
        name: param<string>('name'),
        name_key: param<string>('nameKey'),
        time: param<string>('time'),
        album_id: albumIdUnderArtist(db, param<number>('artistId'), param<number>('albumId')),
      })),
    )
    .returning(['id', 'name', 'time']);

const songInsert = precompiled<Song, { albumId: number; artistId: number; name: string; nameKey: string; time: string }>(insertSong, {
  groupCommit: { rows: insertSongs },
});

/**
 * POST a song is the hot write path: one precompiled statement, committed with concurrent ones (as one
 * statement). Undefined when the album is not under the artist (or either does not exist).
 */
export async function createSong(db: Db, at: AlbumKey, data: CreateSongBody): Promise<Song | undefined> {
  const { name, name_key } = storedName(data.name);
  return songInsert.first(db, { albumId: at.album_id, artistId: at.artist_id, name, nameKey: name_key, time: data.time });
}

/** Several songs of the album in one INSERT (all or none), in the order sent; not batched with other writes. */
export async function createSongs(db: Db, at: AlbumKey, items: CreateSongBody[]): Promise<Song[]> {
  const rows = await db
    .insertInto('songs')
    .values(items.map((data) => ({ album_id: at.album_id, ...storedName(data.name), time: data.time })))
    .returning(['id', 'name', 'time'])
    .execute();
  return inInsertOrder(rows);
}

/** One page of an album's songs and the total the filters select. */
export async function listSongs(db: Db, at: AlbumKey, plan: ListPlan): Promise<ListResult<Song>> {
  const base = () => db.selectFrom('songs').where('album_id', '=', param<number>('albumId'));
  return listPage(
    db,
    { key: 'songs-of-album', table: 'songs', values: { albumId: at.album_id }, base, rows: () => base().select(['id', 'name', 'time']) },
    plan,
  );
}

const songUnderAlbum = precompiled<VersionedSong, { songId: number; albumId: number; artistId: number }>((db) =>
  db
    .selectFrom('songs')
    .select(['id', 'name', 'time', 'version'])
    .where('id', '=', param<number>('songId'))
    .where('album_id', 'in', albumIdUnderArtist(db, param<number>('artistId'), param<number>('albumId'))),
);

export async function getSong(db: Db, at: SongKey): Promise<VersionedSong | undefined> {
  return songUnderAlbum.first(db, { songId: at.song_id, albumId: at.album_id, artistId: at.artist_id });
}

export async function updateSong(db: Db, at: SongKey, patch: UpdateSongBody, versions: number[] | undefined): Promise<VersionedSong | undefined> {
  return db
    .updateTable('songs')
    .set((eb) => ({
      ...(patch.name !== undefined ? storedName(patch.name) : {}),
      ...(patch.time !== undefined ? { time: patch.time } : {}),
      version: eb('version', '+', 1),
    }))
    .where(atPath(songPath(at), versions))
    .returning(['id', 'name', 'time', 'version'])
    .executeTakeFirst();
}
