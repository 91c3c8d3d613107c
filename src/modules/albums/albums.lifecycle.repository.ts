import type { Db } from '../../db/database.js';
import { param, precompiled } from '../../db/precompiled.js';
import { artistExists } from '../artists/artists.repository.js';
import type { Album, UpdateAlbumBody } from './albums.schemas.js';

// Reads with the row version (for the ETag) and writes that check it in the same statement. An
// album is only ever addressed under its own artist.

export type VersionedAlbum = Album & { version: number };

const albumOfArtistWithVersion = precompiled<VersionedAlbum, { albumId: number; artistId: number }>((db) =>
  db
    .selectFrom('albums')
    .select(['id', 'name', 'year', 'image', 'version'])
    .where('id', '=', param<number>('albumId'))
    .where('artist_id', '=', param<number>('artistId')),
);

export async function getAlbum(db: Db, artistId: number, albumId: number): Promise<VersionedAlbum | undefined> {
  return albumOfArtistWithVersion.first(db, { albumId, artistId });
}

/** 'Artist' or 'Album' when that is what does not exist on this path, else null. */
export async function missingAlbumKind(db: Db, artistId: number, albumId: number): Promise<string | null> {
  if (!(await artistExists(db, artistId))) return 'Artist';
  const album = await db.selectFrom('albums').select('id').where('id', '=', albumId).where('artist_id', '=', artistId).executeTakeFirst();
  return album ? null : 'Album';
}

export async function updateAlbum(
  db: Db,
  artistId: number,
  albumId: number,
  patch: UpdateAlbumBody,
  versions: number[] | undefined,
): Promise<VersionedAlbum | undefined> {
  return db
    .updateTable('albums')
    .set((eb) => ({
      ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
      ...(patch.year !== undefined ? { year: patch.year } : {}),
      ...(patch.image !== undefined ? { image: patch.image } : {}),
      version: eb('version', '+', 1),
    }))
    .where('id', '=', albumId)
    .where('artist_id', '=', artistId)
    .$if(versions !== undefined, (qb) => qb.where('version', 'in', versions!))
    .returning(['id', 'name', 'year', 'image', 'version'])
    .executeTakeFirst();
}

/** Deletes the album; ON DELETE CASCADE takes its songs in the same statement. */
export async function deleteAlbum(db: Db, artistId: number, albumId: number, versions: number[] | undefined): Promise<true | undefined> {
  const result = await db
    .deleteFrom('albums')
    .where('id', '=', albumId)
    .where('artist_id', '=', artistId)
    .$if(versions !== undefined, (qb) => qb.where('version', 'in', versions!))
    .executeTakeFirst();
  return result.numDeletedRows > 0n ? true : undefined;
}
