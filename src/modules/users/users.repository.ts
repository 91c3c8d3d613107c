import type { Db } from '../../db/database.js';
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
import { USERS_COUNTRY_NAME_INDEXES, USERS_ORDER_INDEXES } from '../../db/migrations/20261126T0100_collation_keys.js';
import { atPath, type PathStep } from '../versioned-resource.js';
import { collationKey, foldOfKey, nfc } from '../../db/collation.js';
import type { CreateUserBody, PatchUserBody, User, UserKey } from './users.schemas.js';

const COLUMNS = ['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country'] as const;

type UserKeys = Record<'first_name_key' | 'last_name_key' | 'country_key' | 'country_fold', string>;

/**
 * Names and country are stored trimmed and in NFC, as the catalogue stores names, each with its
 * collation key (and the country with its fold) in the same statement (src/db/collation.ts): the
 * fields `data` has (a PATCH sends some).
 */
function stored<T extends Partial<CreateUserBody>>(data: T): T & Partial<UserKeys> {
  const out: Record<string, unknown> = { ...data };
  for (const key of ['first_name', 'last_name', 'country'] as const) {
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

/** The indexes that read users in each sortable field's order (migration 20261126T0100); id: the table. */
const ORDER_INDEXES: OrderIndexes = {
  id: [null, null],
  ...Object.fromEntries(Object.keys(USERS_ORDER_INDEXES).map((field) => [field, [`users_${field}_asc`, `users_${field}_desc`]])),
};

/**
 * The indexes that find the users a filter selects, by the stored column it compares, most selective
 * first (the country's fold, then status, then age; a name prefix or exact name is a range of its
 * order index, as is a country's key).
 */
const FILTER_INDEXES: FilterIndex[] = [
  { column: 'country_fold', also: 'status', index: 'users_country_idx' },
  { column: 'country_fold', index: 'users_country_fold_asc' },
  { column: 'country_key', index: 'users_country_asc' },
  { column: 'status', index: 'users_status_age_idx' },
  { column: 'age', index: 'users_age_asc' },
  { column: 'first_name_key', index: 'users_first_name_asc' },
  { column: 'last_name_key', index: 'users_last_name_asc' },
];
/**
 * The indexes led by a filtered column and then in a sort field's order (migration 20261126T0100):
 * one country's users (its fold: `lives_in`, or a country's key probing it) by id or by a name; one
 * age's users by id (the age order index).
 */
const PINNED_INDEXES: PinnedIndex[] = [
  {
    column: 'country_fold',
    orders: {
      id: ['users_country_fold_asc', 'users_country_fold_asc'],
      ...Object.fromEntries(USERS_COUNTRY_NAME_INDEXES.map((field) => [field, [`users_country_${field}_asc`, `users_country_${field}_desc`]])),
    },
  },
  { column: 'age', orders: { id: ['users_age_asc', 'users_age_asc'] } },
];

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
    filterIndexes: FILTER_INDEXES,
    pinnedIndexes: PINNED_INDEXES,
  } as const;
}

/** One page of users and the total the filters select. */
export async function listUsers(db: Db, plan: ListPlan): Promise<ListResult<User>> {
  return listPage(db, usersListSource(db), plan);
}
