import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { param, precompiled } from '../../db/precompiled.js';
import { listPage, type ListPlan, type ListResult } from '../../query/index.js';
import { atPath, type PathStep } from '../versioned-resource.js';
import { artistPath } from '../artists/artists.repository.js';
import { storedPatch, storedRow } from '../stored-row.js';
import { ALBUMS } from './albums.table.js';
import type { ArtistKey } from '../artists/artists.schemas.js';
import type { Album, AlbumKey, CreateAlbumBody, UpdateAlbumBody } from './albums.schemas.js';

// An album is only ever addressed under its own artist: an album under another artist does not
// exist. Single albums are read with their row version (for the ETag) and written with a check of
// it in the same statement.

export type VersionedAlbum = Album & { version: number };

export const albumPath = (at: AlbumKey): PathStep[] => [...artistPath(at), { kind: 'Album', table: 'albums', id: at.album_id, parent: 'artist_id' }];

export async function createAlbum(db: Db, at: ArtistKey, data: CreateAlbumBody): Promise<Album> {
  return db
    .insertInto('albums')
    .values({ artist_id: at.artist_id, ...storedRow(ALBUMS, data) })
    .returning(ALBUMS.fields)
    .executeTakeFirstOrThrow();
}

/** Several albums of the artist in one INSERT (all or none), in the order sent. */
export async function createAlbums(db: Db, at: ArtistKey, items: CreateAlbumBody[]): Promise<Album[]> {
  const rows = await db
    .insertInto('albums')
    .values(items.map((data) => ({ artist_id: at.artist_id, ...storedRow(ALBUMS, data) })))
    .returning(ALBUMS.fields)
    .execute();
  return inInsertOrder(rows);
}

/** One page of an artist's albums and the total the filters select. */
export async function listAlbums(db: Db, at: ArtistKey, plan: ListPlan): Promise<ListResult<Album>> {
  const base = () => db.selectFrom('albums').where('artist_id', '=', param<number>('artistId'));
  return listPage(
    db,
    { key: 'albums-of-artist', table: 'albums', values: { artistId: at.artist_id }, base, rows: () => base().select(ALBUMS.fields), onePlan: true },
    plan,
  );
}

const albumUnderArtist = precompiled<VersionedAlbum, { albumId: number; artistId: number }>(
  (db) =>
    db
      .selectFrom('albums')
      .select([...ALBUMS.fields, 'version'])
      .where('id', '=', param<number>('albumId'))
      .where('artist_id', '=', param<number>('artistId')),
  // An album's songs (10% of the bench's mix) read it first: on PostgreSQL, concurrent ones in one statement (db/pg-keyed.ts).
  { keys: { albumId: 'int4', artistId: 'int4' } },
);

export async function getAlbum(db: Db, at: AlbumKey): Promise<VersionedAlbum | undefined> {
  return albumUnderArtist.first(db, { albumId: at.album_id, artistId: at.artist_id });
}

export async function updateAlbum(db: Db, at: AlbumKey, patch: UpdateAlbumBody, versions: number[] | undefined): Promise<VersionedAlbum | undefined> {
  return db
    .updateTable('albums')
    .set((eb) => ({ ...storedPatch(ALBUMS, patch), version: eb('version', '+', 1) }))
    .where(atPath(albumPath(at), versions))
    .returning([...ALBUMS.fields, 'version'])
    .executeTakeFirst();
}
