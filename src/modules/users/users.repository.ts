import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { declarePrefixSummary, declareSummary, listPage, type FilterIndex, type ListPlan, type OrderIndexes, type PinnedIndex } from '../../query/index.js';
import { USERS_COUNTRY_NAME_INDEXES } from '../../db/migrations/20261124T1000_users_country_name_indexes.js';
import { USERS_ORDER_INDEXES } from '../../db/migrations/20261124T0200_users_order_indexes.js';
import { atPath, type PathStep } from '../versioned-resource.js';
import type { CreateUserBody, PatchUserBody, User, UserKey } from './users.schemas.js';

const COLUMNS = ['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country'] as const;

/** Names and country are stored trimmed, as the catalogue stores names. */
function stored<T extends Partial<CreateUserBody>>(data: T): T {
  const out = { ...data };
  for (const key of ['first_name', 'last_name', 'country'] as const) {
    const v = out[key];
    if (typeof v === 'string') (out as Partial<CreateUserBody>)[key] = v.trim();
  }
  return out;
}

export async function createUser(db: Db, data: CreateUserBody): Promise<User> {
  return db.insertInto('users').values(stored(data)).returning(COLUMNS).executeTakeFirstOrThrow();
}

/** Several users in one INSERT (all or none: one duplicate email fails them all), in the order sent. */
export async function createUsers(db: Db, items: CreateUserBody[]): Promise<User[]> {
  const rows = await db.insertInto('users').values(items.map(stored)).returning(COLUMNS).execute();
  return inInsertOrder(rows);
}

// Single users are read with their row version (for the ETag) and written with a check of it in
// the same statement, as artists, albums and songs are.

export type VersionedUser = User & { version: number };

const VERSIONED = [...COLUMNS, 'version'] as const;

export const userPath = (at: UserKey): PathStep[] => [{ kind: 'User', table: 'users', id: at.id }];

export async function getUser(db: Db, at: UserKey): Promise<VersionedUser | undefined> {
  return db.selectFrom('users').select(VERSIONED).where('id', '=', at.id).executeTakeFirst();
}

/** Applies the fields sent and bumps the version, only if the row has one of `versions` (when given). */
export async function updateUser(db: Db, at: UserKey, data: PatchUserBody, versions: number[] | undefined): Promise<VersionedUser | undefined> {
  return db
    .updateTable('users')
    .set((eb) => ({ ...stored(data), version: eb('version', '+', 1) }))
    .where(atPath(userPath(at), versions))
    .returning(VERSIONED)
    .executeTakeFirst();
}

/**
 * Users per status, folded country and age, kept exact by triggers (migration 20261124T0100): totals
 * over filters it answers are sums of it. What it answers follows from how it holds each column: the
 * country folded (a case-insensitive equality or a prefix, not an exact country), status and age as
 * the users table does (gt/lt on the age only: text under `<` is the database's collation).
 */
const USERS_COUNTS = declareSummary('users_counts', {
  status: { fold: 'none', ops: ['eq', 'prefix'] },
  country: { fold: 'ascii', ops: ['eq', 'prefix'] },
  age: { fold: 'none', ops: ['eq', 'gt', 'lt'] },
});

/** Users per folded first / last name, kept exact by triggers: the total of a lone name prefix is a sum of it. */
const USERS_NAME_COUNTS = declarePrefixSummary('users_name_counts', ['first_name', 'last_name'], 'users_counts');

/** The indexes that read users in each sortable field's order (migration 20261124T0200); id: the table. */
const ORDER_INDEXES: OrderIndexes = {
  id: [null, null],
  ...Object.fromEntries(Object.keys(USERS_ORDER_INDEXES).map((field) => [field, [`users_${field}_asc`, `users_${field}_desc`]])),
};

/** The indexes that find the users a filter selects, most selective first (country, then status, then age; a name prefix is a range of its order index). */
const FILTER_INDEXES: FilterIndex[] = [
  { column: 'country', also: 'status', index: 'users_country_idx' },
  { column: 'country', index: 'users_country_asc' },
  { column: 'status', index: 'users_status_age_idx' },
  { column: 'age', index: 'users_age_asc' },
  { column: 'first_name', index: 'users_first_name_asc' },
  { column: 'last_name', index: 'users_last_name_asc' },
];

/**
 * The indexes led by a filtered column and then in a sort field's order: one country's users by id
 * (the country order index, migration 20261124T0200) or by a name (migration 20261124T1000); one
 * age's users by id (the age order index).
 */
const PINNED_INDEXES: PinnedIndex[] = [
  {
    column: 'country',
    folded: true,
    orders: {
      id: ['users_country_asc', 'users_country_asc'],
      ...Object.fromEntries(USERS_COUNTRY_NAME_INDEXES.map((field) => [field, [`users_country_${field}_asc`, `users_country_${field}_desc`]])),
    },
  },
  { column: 'age', folded: false, orders: { id: ['users_age_asc', 'users_age_asc'] } },
];

/** What a users list reads from: the table, its summaries and its indexes (query/statements.ts ListSource). */
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
    filterIndexes: FILTER_INDEXES,
    pinnedIndexes: PINNED_INDEXES,
  } as const;
}

/** One page of users and the total the filters select. */
export async function listUsers(db: Db, plan: ListPlan): Promise<{ rows: User[]; total: number }> {
  return listPage(db, usersListSource(db), plan);
}
