import type { Db } from '../../db/database.js';
import { param, precompiled } from '../../db/precompiled.js';
import { missingAlbumKind } from '../albums/albums.lifecycle.repository.js';
import type { Song, UpdateSongBody } from './songs.schemas.js';

// Reads with the row version (for the ETag) and writes that check it in the same statement. A song
// is only ever addressed under its own album, itself under its own artist.

export type VersionedSong = Song & { version: number };

/** The ids of the album, only when it belongs to the artist (an empty set otherwise). */
const albumOfArtist = (db: Db, artistId: number, albumId: number) =>
  db.selectFrom('albums').select('id').where('id', '=', albumId).where('artist_id', '=', artistId);

const songOfAlbumWithVersion = precompiled<VersionedSong, { songId: number; albumId: number; artistId: number }>((db) =>
  db
    .selectFrom('songs')
    .select(['id', 'name', 'time', 'version'])
    .where('id', '=', param<number>('songId'))
    .where('album_id', 'in', albumOfArtist(db, param<number>('artistId'), param<number>('albumId'))),
);

export async function getSong(db: Db, artistId: number, albumId: number, songId: number): Promise<VersionedSong | undefined> {
  return songOfAlbumWithVersion.first(db, { songId, albumId, artistId });
}

/** 'Artist', 'Album' or 'Song' when that is what does not exist on this path, else null. */
export async function missingSongKind(db: Db, artistId: number, albumId: number, songId: number): Promise<string | null> {
  const missing = await missingAlbumKind(db, artistId, albumId);
  if (missing) return missing;
  const song = await db.selectFrom('songs').select('id').where('id', '=', songId).where('album_id', '=', albumId).executeTakeFirst();
  return song ? null : 'Song';
}

export async function updateSong(
  db: Db,
  path: { artistId: number; albumId: number; songId: number },
  patch: UpdateSongBody,
  versions: number[] | undefined,
): Promise<VersionedSong | undefined> {
  return db
    .updateTable('songs')
    .set((eb) => ({
      ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
      ...(patch.time !== undefined ? { time: patch.time } : {}),
      version: eb('version', '+', 1),
    }))
    .where('id', '=', path.songId)
    .where('album_id', 'in', albumOfArtist(db, path.artistId, path.albumId))
    .$if(versions !== undefined, (qb) => qb.where('version', 'in', versions!))
    .returning(['id', 'name', 'time', 'version'])
    .executeTakeFirst();
}

export async function deleteSong(
  db: Db,
  path: { artistId: number; albumId: number; songId: number },
  versions: number[] | undefined,
): Promise<true | undefined> {
  const result = await db
    .deleteFrom('songs')
    .where('id', '=', path.songId)
    .where('album_id', 'in', albumOfArtist(db, path.artistId, path.albumId))
    .$if(versions !== undefined, (qb) => qb.where('version', 'in', versions!))
    .executeTakeFirst();
  return result.numDeletedRows > 0n ? true : undefined;
}
