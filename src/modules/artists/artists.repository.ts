import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { listPage, type ListPlan, type ListResult } from '../../query/index.js';
import { param, precompiled } from '../../db/precompiled.js';
import { atPath, type PathStep } from '../versioned-resource.js';
import { storedPatch, storedRow } from '../stored-row.js';
import { ARTISTS } from './artists.table.js';
import type { Artist, ArtistKey, CreateArtistBody, UpdateArtistBody } from './artists.schemas.js';

// Single artists are read with their row version (for the ETag) and written with a check of it in
// the same statement.

export type VersionedArtist = Artist & { version: number };

export const artistPath = (at: ArtistKey): PathStep[] => [{ kind: 'Artist', table: 'artists', id: at.artist_id }];

export async function createArtist(db: Db, data: CreateArtistBody): Promise<Artist> {
  return db.insertInto('artists').values(storedRow(ARTISTS, data)).returning(ARTISTS.fields).executeTakeFirstOrThrow();
}

/** Several artists in one INSERT (all or none), in the order sent. */
export async function createArtists(db: Db, items: CreateArtistBody[]): Promise<Artist[]> {
  const rows = await db
    .insertInto('artists')
    .values(items.map((data) => storedRow(ARTISTS, data)))
    .returning(ARTISTS.fields)
    .execute();
  return inInsertOrder(rows);
}

/** One page of artists and the total the filters select. */
export async function listArtists(db: Db, plan: ListPlan): Promise<ListResult<Artist>> {
  const base = () => db.selectFrom('artists');
  return listPage(db, { key: 'artists', table: 'artists', values: {}, base, rows: () => base().select(ARTISTS.fields) }, plan);
}

const artistById = precompiled<VersionedArtist, { id: number }>((db) =>
  db
    .selectFrom('artists')
    .select([...ARTISTS.fields, 'version'])
    .where('id', '=', param<number>('id')),
);

/** GET /artists/{id} (and the artist of its albums list) is a hot path: one precompiled statement. */
export async function getArtist(db: Db, at: ArtistKey): Promise<VersionedArtist | undefined> {
  return artistById.first(db, { id: at.artist_id });
}

/** Applies the fields sent and bumps the version, only if the row has one of `versions` (when given). */
export async function updateArtist(db: Db, at: ArtistKey, patch: UpdateArtistBody, versions: number[] | undefined): Promise<VersionedArtist | undefined> {
  return db
    .updateTable('artists')
    .set((eb) => ({ ...storedPatch(ARTISTS, patch), version: eb('version', '+', 1) }))
    .where(atPath(artistPath(at), versions))
    .returning([...ARTISTS.fields, 'version'])
    .executeTakeFirst();
}
