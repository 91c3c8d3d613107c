import type { ColumnType, Generated } from 'kysely';
import { defineTable } from '../table.js';

// The users table, stated once: its row, its fields, its names, its events and the indexes the list
// statements name. Repositories, transfer, events and new migrations read it; shipped migrations keep
// frozen copies of what they needed (a later change here must not change what they did).

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

/** The users order indexes, per sortable field: the key, then the rest (ties by id ascending; filtered columns carried). Migration 20261126T0100. */
export const USERS_ORDER_INDEXES = {
  first_name: ['first_name_key', 'id, status, age, country_fold, last_name_key'],
  last_name: ['last_name_key', 'id, status, age, country_fold, first_name_key'],
  age: ['age', 'id, status, country_fold'],
  status: ['status collate "binary"', 'id, age, country_fold'],
  country: ['country_key', 'id, status, age, country_fold'],
} as const;

/** The users indexes led by the country's fold: in id order, and in each name's order (both directions). Migration 20261126T0100. */
export const USERS_COUNTRY_NAME_INDEXES = ['first_name', 'last_name'] as const;
