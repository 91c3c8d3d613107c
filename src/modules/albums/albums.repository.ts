import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { param, precompiled } from '../../db/precompiled.js';
import { listPage, type ListPlan } from '../../query/index.js';
import type { Album, CreateAlbumBody } from './albums.schemas.js';

export async function insertAlbum(db: Db, artistId: number, data: CreateAlbumBody): Promise<Album> {
  return db
    .insertInto('albums')
    .values({ artist_id: artistId, name: data.name.trim(), year: data.year, image: data.image })
    .returning(['id', 'name', 'year', 'image'])
    .executeTakeFirstOrThrow();
}

/** Several albums of the artist in one INSERT (all or none), in the order sent. */
export async function insertAlbums(db: Db, artistId: number, items: CreateAlbumBody[]): Promise<Album[]> {
  const rows = await db
    .insertInto('albums')
    .values(items.map((data) => ({ artist_id: artistId, name: data.name.trim(), year: data.year, image: data.image })))
    .returning(['id', 'name', 'year', 'image'])
    .execute();
  return inInsertOrder(rows);
}

/** One page of an artist's albums and the total the filters select. */
export async function listAlbumsOfArtist(db: Db, artistId: number, plan: ListPlan): Promise<{ rows: Album[]; total: number }> {
  const base = () => db.selectFrom('albums').where('artist_id', '=', param<number>('artistId'));
  return listPage(
    db,
    { key: 'albums-of-artist', table: 'albums', values: { artistId }, base, rows: () => base().select(['id', 'name', 'year', 'image']) },
    plan,
  );
}

/** The album, only when it belongs to the artist: an album under another artist does not exist. */
const albumOfArtist = precompiled<Album, { albumId: number; artistId: number }>((db) =>
  db.selectFrom('albums').select(['id', 'name', 'year', 'image']).where('id', '=', param<number>('albumId')).where('artist_id', '=', param<number>('artistId')),
);

export async function findAlbumOfArtist(db: Db, artistId: number, albumId: number): Promise<Album | undefined> {
  return albumOfArtist.first(db, { albumId, artistId });
}
