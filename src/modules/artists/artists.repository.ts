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

// POST an artist is a hot write path: one precompiled statement, committed with concurrent ones as
// one multi-row INSERT (db/group-commit.ts on SQLite, db/pg-batch.ts on PostgreSQL). On PostgreSQL
// that is one round trip, one run of each statement trigger (events, table version) and one commit
// for the whole batch, instead of one each per artist (issue 32). Every row binds the stored fields
// by their names. A keyed POST (Idempotency-Key) writes in its own transaction, outside the batches.

/** What an artist's row stores from its body (artists.table.ts): the name, its key, the fields stored as sent. */
const STORED = ['name', 'name_key', ...ARTISTS.plain] as const;
type StoredArtist = ReturnType<typeof storedRow<CreateArtistBody, (typeof ARTISTS.plain)[number]>>;

/** INSERT of n artists, each row binding the stored fields by name. */
const insertArtists = (db: Db, n: number) =>
  db
    .insertInto('artists')
    .values(Array.from({ length: n }, () => Object.fromEntries(STORED.map((column) => [column, param<string>(column)])) as StoredArtist))
    .returning(ARTISTS.fields);

const artistInsert = precompiled<Artist, StoredArtist>((db) => insertArtists(db, 1), { groupCommit: { rows: insertArtists } });

export async function createArtist(db: Db, data: CreateArtistBody): Promise<Artist> {
  const row = await artistInsert.first(db, storedRow(ARTISTS, data));
  if (row === undefined) throw new Error('INSERT INTO artists returned no row');
  return row;
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
  return listPage(db, { key: 'artists', table: 'artists', values: {}, base, rows: () => base().select(ARTISTS.fields), onePlan: true }, plan);
}

const artistById = precompiled<VersionedArtist, { id: number }>(
  (db) =>
    db
      .selectFrom('artists')
      .select([...ARTISTS.fields, 'version'])
      .where('id', '=', param<number>('id')),
  { keys: { id: 'int4' } },
);

/**
 * GET /artists/{id} (and the artist of its albums list) is a hot path: one precompiled statement; on
 * PostgreSQL, concurrent ones read in one statement (db/pg-keyed.ts).
 */
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
