import type { Db } from '../../db/database.js';
import type { Artist, CreateArtistBody } from './artists.schemas.js';

export async function insertArtist(db: Db, data: CreateArtistBody): Promise<Artist> {
  return db
    .insertInto('artists')
    .values({ name: data.name.trim(), image: data.image })
    .returning(['id', 'name', 'image'])
    .executeTakeFirstOrThrow();
}

export async function findArtist(db: Db, id: number): Promise<Artist | undefined> {
  return db.selectFrom('artists').select(['id', 'name', 'image']).where('id', '=', id).executeTakeFirst();
}

export async function artistExists(db: Db, id: number): Promise<boolean> {
  return (await db.selectFrom('artists').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
