import type { Db } from '../../db/database.js';
import type { Kysely } from 'kysely';
import { param, precompiled } from '../../db/precompiled.js';
import { UpdateBatcher } from '../../db/pg-batch.js';
import { MAX_ROWS } from '../../db/group-commit.js';
import { isPostgres } from '../../db/dialect.js';
import { inInsertOrder } from '../../http/bulk.js';
import {
  declarePrefixSummary,
  declareSummary,
  listPage,
  type FilterIndex,
  type ListPlan,
  type ListResult,
  type OrderIndexes,
  type PinnedIndex,
} from '../../query/index.js';
import { USERS, USERS_INDEXES } from './users.table.js';
import { atPath, type PathStep } from '../versioned-resource.js';
import { collationKey, foldOfKey, nfc } from '../../db/collation.js';
import type { CreateUserBody, PatchUserBody, User, UserKey } from './users.schemas.js';

const COLUMNS = USERS.fields;

type UserKeys = Record<'first_name_key' | 'last_name_key' | 'country_key' | 'country_fold', string>;

/**
 * Names and country are stored trimmed and in NFC, as the catalogue stores names, each with its
 * collation key (and the country with its fold) in the same statement (src/db/collation.ts): the
 * fields `data` has (a PATCH sends some).
 */
function stored<T extends Partial<CreateUserBody>>(data: T): T & Partial<UserKeys> {
  const out: Record<string, unknown> = { ...data };
  for (const key of USERS.names) {
    const v = data[key];
    if (typeof v !== 'string') continue;
    const text = nfc(v.trim());
    out[key] = text;
    out[`${key}_key`] = collationKey(text);
    if (key === 'country') out.country_fold = foldOfKey(out.country_key as string);
  }
  return out as T & Partial<UserKeys>;
}

/** A new user as stored: every field, every key. */
const storedUser = (data: CreateUserBody) => stored(data) as CreateUserBody & UserKeys;

export async function createUser(db: Db, data: CreateUserBody): Promise<User> {
  return db.insertInto('users').values(storedUser(data)).returning(COLUMNS).executeTakeFirstOrThrow();
}

/** Several users in one INSERT (all or none: one duplicate email fails them all), in the order sent. */
export async function createUsers(db: Db, items: CreateUserBody[]): Promise<User[]> {
  const rows = await db.insertInto('users').values(items.map(storedUser)).returning(COLUMNS).execute();
  return inInsertOrder(rows);
}

// Single users are read with their row version (for the ETag) and written with a check of it in
// the same statement, as artists, albums and songs are.

export type VersionedUser = User & { version: number };

const VERSIONED = [...COLUMNS, 'version'] as const;

export const userPath = (at: UserKey): PathStep[] => [{ kind: 'User', table: 'users', id: at.id }];

const userById = precompiled<VersionedUser, { id: number }>((db) => db.selectFrom('users').select(VERSIONED).where('id', '=', param<number>('id')), {
  keys: { id: 'int4' },
});

/**
 * GET /users/{id} is a hot path (15% of the bench's mix): one precompiled statement, as an artist's;
 * on PostgreSQL, concurrent ones read in one statement (db/pg-keyed.ts).
 */
export async function getUser(db: Db, at: UserKey): Promise<VersionedUser | undefined> {
  return userById.first(db, { id: at.id });
}

/** Applies the fields sent and bumps the version, only if the row has one of `versions` (when given). */
export async function updateUser(db: Db, at: UserKey, data: PatchUserBody, versions: number[] | undefined): Promise<VersionedUser | undefined> {
  if (versions === undefined && !db.isTransaction && isPostgres(db)) return userUpdates(db).run(at.id, stored(data));
  return updateAlone(db, at.id, stored(data), versions);
}

function updateAlone(db: Db, id: number, values: Partial<CreateUserBody & UserKeys>, versions: number[] | undefined): Promise<VersionedUser | undefined> {
  return db
    .updateTable('users')
    .set((eb) => ({ ...values, version: eb('version', '+', 1) }))
    .where(atPath(userPath({ id }), versions))
    .returning(VERSIONED)
    .executeTakeFirst();
}

// PostgreSQL: a PATCH without If-Match is committed with concurrent ones (db/pg-batch.ts UpdateBatcher):
// one UPDATE for the batch, which runs the users triggers (events, table version, totals) once
// instead of once per user (issue 32). A conditional PATCH checks its version in its own statement.
/** The columns a PATCH may set: the fields with their collation keys and the country's fold (users.table.ts). */
const PATCHED_COLUMNS = new Set<string>([...USERS.fields.filter((f) => f !== 'id'), ...USERS.names.map((name) => `${name}_key`), 'country_fold']);
const updateBatchers = new WeakMap<Db, UpdateBatcher<VersionedUser>>();

function userUpdates(db: Db): UpdateBatcher<VersionedUser> {
  let batcher = updateBatchers.get(db);
  if (!batcher) {
    batcher = new UpdateBatcher<VersionedUser>(db as unknown as Kysely<unknown>, 'users', PATCHED_COLUMNS, VERSIONED, MAX_ROWS, (id, values) =>
      updateAlone(db, id, values, undefined),
    );
    updateBatchers.set(db, batcher);
  }
  return batcher;
}

/**
 * Users per status, country and age, kept exact by triggers (migrations 20261124T0100, 20261126T0100):
 * totals over filters it answers are sums of it. It holds the users' own stored columns: the status,
 * the country's fold (what `lives_in` compares) and collation key (what a sort by country and a
 * country prefix compare), the age; not the country as written (an exact country is counted through
 * the index path). gt/lt on the age only.
 */
const USERS_COUNTS = declareSummary('users_counts', {
  status: { ops: ['eq'] },
  country_fold: { ops: ['eq'] },
  country_key: { ops: ['eq', 'prefix'] },
  age: { ops: ['eq', 'gt', 'lt'] },
});

/** Users per first / last name's collation key, kept exact by triggers: the total of a lone name prefix is a sum of it. */
const USERS_NAME_COUNTS = declarePrefixSummary('users_name_counts', ['first_name', 'last_name'], 'users_counts');

// The indexes the list statements read, as users.table.ts states them, typed for the list engine.
const ORDER_INDEXES: OrderIndexes = USERS_INDEXES.order;
const FILTER_INDEXES: readonly FilterIndex[] = USERS_INDEXES.filter;
const PINNED_INDEXES: readonly PinnedIndex[] = USERS_INDEXES.pinned;

/** What a users list reads from: the table, its summaries and its indexes (query/list/source.ts ListSource). */
export function usersListSource(db: Db) {
  const base = () => db.selectFrom('users');
  return {
    key: 'users',
    table: 'users',
    values: {},
    base,
    rows: () => base().select(COLUMNS),
    summary: USERS_COUNTS,
    prefixSummary: USERS_NAME_COUNTS,
    orderIndexes: ORDER_INDEXES,
    // The index that holds status and age exists on SQLite only (users.table.ts USERS_INDEXES.held).
    filterIndexes: isPostgres(db) ? FILTER_INDEXES : [USERS_INDEXES.held, ...FILTER_INDEXES],
    pinnedIndexes: PINNED_INDEXES,
    carriedColumns: USERS_INDEXES.carried,
  } as const;
}

/** One page of users and the total the filters select. */
export async function listUsers(db: Db, plan: ListPlan): Promise<ListResult<User>> {
  return listPage(db, usersListSource(db), plan);
}
