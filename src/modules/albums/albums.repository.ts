import type { Db } from '../../db/database.js';
import { applyToSelect, countRows, totalFromPage, type ListPlan } from '../../query/index.js';
import type { Album, CreateAlbumBody } from './albums.schemas.js';

export async function insertAlbum(db: Db, artistId: number, data: CreateAlbumBody): Promise<Album> {
  return db
    .insertInto('albums')
    .values({ artist_id: artistId, name: data.name.trim(), year: data.year, image: data.image })
    .returning(['id', 'name', 'year', 'image'])
    .executeTakeFirstOrThrow();
}

/** One page of an artist's albums and the total the filters select. */
export async function listAlbumsOfArtist(db: Db, artistId: number, plan: ListPlan): Promise<{ rows: Album[]; total: number }> {
  const base = db.selectFrom('albums').where('artist_id', '=', artistId);
  const rows = await applyToSelect(base.select(['id', 'name', 'year', 'image']), plan).execute();
  return { rows, total: totalFromPage(plan, rows.length) ?? (await countRows(db, base, plan)) };
}

/** The album, only when it belongs to the artist: an album under another artist does not exist. */
export async function findAlbumOfArtist(db: Db, artistId: number, albumId: number): Promise<Album | undefined> {
  return db
    .selectFrom('albums')
    .select(['id', 'name', 'year', 'image'])
    .where('id', '=', albumId)
    .where('artist_id', '=', artistId)
    .executeTakeFirst();
}
