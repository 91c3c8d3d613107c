import type { Db } from '../../db/database.js';
import { param, precompiled } from '../../db/precompiled.js';
import type { Artist, UpdateArtistBody } from './artists.schemas.js';

// Reads with the row version (for the ETag) and writes that check it in the same statement.

export type VersionedArtist = Artist & { version: number };

const artistWithVersion = precompiled<VersionedArtist, { id: number }>((db) =>
  db.selectFrom('artists').select(['id', 'name', 'image', 'version']).where('id', '=', param<number>('id')),
);

/** GET /artists/{id} is a hot path: one precompiled statement. */
export async function getArtist(db: Db, id: number): Promise<VersionedArtist | undefined> {
  return artistWithVersion.first(db, { id });
}

/** Applies the fields sent and bumps the version, only if the row has one of `versions` (when given). */
export async function updateArtist(db: Db, id: number, patch: UpdateArtistBody, versions: number[] | undefined): Promise<VersionedArtist | undefined> {
  return db
    .updateTable('artists')
    .set((eb) => ({
      ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
      ...(patch.image !== undefined ? { image: patch.image } : {}),
      version: eb('version', '+', 1),
    }))
    .where('id', '=', id)
    .$if(versions !== undefined, (qb) => qb.where('version', 'in', versions!))
    .returning(['id', 'name', 'image', 'version'])
    .executeTakeFirst();
}

/** Deletes the artist; ON DELETE CASCADE takes its albums and their songs in the same statement. */
export async function deleteArtist(db: Db, id: number, versions: number[] | undefined): Promise<true | undefined> {
  const result = await db
    .deleteFrom('artists')
    .where('id', '=', id)
    .$if(versions !== undefined, (qb) => qb.where('version', 'in', versions!))
    .executeTakeFirst();
  return result.numDeletedRows > 0n ? true : undefined;
}
