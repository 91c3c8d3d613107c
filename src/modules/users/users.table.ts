import type { ColumnType, Generated } from 'kysely';
import { defineTable } from '../table.js';

// The users table, stated once: its row, its fields, its names, its events and the indexes the list
// statements name (modules/table.ts says who reads it). Migrations write out what they need of it
// (a later change here must not change what they did).

export interface UserTable {
  id: Generated<number>;
  first_name: string;
  last_name: string;
  email: string;
  age: number;
  status: string;
  country: string;
  first_name_key: string;
  last_name_key: string;
  country_key: string;
  /** The country's fold alone: what lives_in compares. */
  country_fold: string;
  version: ColumnType<number, number | undefined, number>;
}

export const USERS = defineTable({
  table: 'users',
  /** What a user is: what GET answers and an event carries, in this order. */
  fields: ['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country'],
  /** Fields stored with their collation key `<field>_key` (db/collation.ts); the country with its fold too. */
  names: ['first_name', 'last_name', 'country'],
  /** Its events: `user.created|updated|deleted`; a deletion carries these fields. */
  event: { type: 'user', deleted: ['id'] },
});

/**
 * The users order indexes, per sortable field that has one: the key, then the rest (ties by id
 * ascending; the country's fold carried, what lives_in compares). No users index holds status or age
 * (migration 20261127T0100: a PATCH of them is then a HOT update on PostgreSQL, and writes no index
 * entry on either backend): a sort by either is read per value (query/list/by-value.ts) or sorted,
 * and a filter on either is checked on the row.
 */
export const USERS_ORDER_INDEXES = {
  first_name: ['first_name_key', 'id, country_fold, last_name_key'],
  last_name: ['last_name_key', 'id, country_fold, first_name_key'],
  country: ['country_key', 'id, country_fold'],
} as const;

/** The users indexes led by the country's fold: in id order, and in each name's order (both directions). Migrations 20261126T0100, 20261127T0100. */
export const USERS_COUNTRY_NAME_INDEXES = ['first_name', 'last_name'] as const;

type Pair = readonly [asc: string, desc: string];
const orderPair = (field: string): Pair => [`users_${field}_asc`, `users_${field}_desc`];

/** The indexes the users list statements read (migration 20261127T0100 made them; test/db/table-modules.test.ts checks they exist). */
export const USERS_INDEXES = {
  /** Per sortable field with an index in its order, that index ascending and descending; id: the table itself. */
  order: {
    id: [null, null],
    ...Object.fromEntries(Object.keys(USERS_ORDER_INDEXES).map((field) => [field, orderPair(field)])),
  } as Readonly<Record<string, readonly [asc: string | null, desc: string | null]>>,
  /**
   * The indexes that find the users a filter selects, by the stored column it compares, most selective
   * first (the country's fold; a name prefix or exact name is a range of its order index, as is a
   * country's key). None for status or age: those are checked on the row.
   */
  filter: [
    { column: 'country_fold', index: 'users_country_fold_asc' },
    { column: 'country_key', index: 'users_country_asc' },
    { column: 'first_name_key', index: 'users_first_name_asc' },
    { column: 'last_name_key', index: 'users_last_name_asc' },
  ],
  /**
   * SQLite only (migration 20261127T0340; none on PostgreSQL, where it would make a PATCH of status
   * or age a non-HOT update): an index led by the country's fold and status that holds every column a
   * users filter or sort compares, the age then id first (one age's users of a country and status in id
   * order). The matches of a country, a status and an age range are read from its entries alone.
   */
  held: {
    column: 'country_fold',
    index: 'users_country_status_age',
    also: 'status',
    holds: ['country_fold', 'status', 'age', 'id', 'first_name_key', 'last_name_key', 'country_key'],
  },
  /** The stored columns every order index carries: a filter on them is checked in the index entry, any other on the row (page-strategy.ts pageRoute). */
  carried: ['country_fold'],
  /**
   * The indexes led by a filtered column and then in a sort field's order: one country's users (its
   * fold: `lives_in`, or a country's key probing it) by id or by a name.
   */
  pinned: [
    {
      column: 'country_fold',
      orders: {
        id: ['users_country_fold_asc', 'users_country_fold_asc'],
        ...Object.fromEntries(USERS_COUNTRY_NAME_INDEXES.map((field) => [field, [`users_country_${field}_asc`, `users_country_${field}_desc`] as Pair])),
      } as Readonly<Record<string, Pair>>,
    },
  ],
} as const;
