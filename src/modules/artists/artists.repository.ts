import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { listPage, type ListPlan } from '../../query/index.js';
import { param, precompiled } from '../../db/precompiled.js';
import type { Artist, CreateArtistBody } from './artists.schemas.js';

export async function insertArtist(db: Db, data: CreateArtistBody): Promise<Artist> {
  return db.insertInto('artists').values({ name: data.name.trim(), image: data.image }).returning(['id', 'name', 'image']).executeTakeFirstOrThrow();
}

/** Several artists in one INSERT (all or none), in the order sent. */
export async function insertArtists(db: Db, items: CreateArtistBody[]): Promise<Artist[]> {
  const rows = await db
    .insertInto('artists')
    .values(items.map((data) => ({ name: data.name.trim(), image: data.image })))
    .returning(['id', 'name', 'image'])
    .execute();
  return inInsertOrder(rows);
}

/** One page of artists and the total the filters select. */
export async function listArtists(db: Db, plan: ListPlan): Promise<{ rows: Artist[]; total: number }> {
  const base = () => db.selectFrom('artists');
  return listPage(db, { key: 'artists', table: 'artists', values: {}, base, rows: () => base().select(['id', 'name', 'image']) }, plan);
}

const artistById = precompiled<Artist, { id: number }>((db) => db.selectFrom('artists').select(['id', 'name', 'image']).where('id', '=', param<number>('id')));

export async function findArtist(db: Db, id: number): Promise<Artist | undefined> {
  return artistById.first(db, { id });
}

export async function artistExists(db: Db, id: number): Promise<boolean> {
  return (await db.selectFrom('artists').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
