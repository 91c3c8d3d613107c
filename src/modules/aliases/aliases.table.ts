import type { Generated } from 'kysely';
import { defineTable } from '../table.js';

// The aliases table, stated once (modules/table.ts says who reads it). An alias is addressed by its
// collection and name, not its id.

export interface AliasTable {
  id: Generated<number>;
  collection: string;
  name: string;
  query: string;
}

export const ALIASES = defineTable({
  table: 'aliases',
  fields: ['name', 'collection', 'query'],
  names: [],
  event: { type: 'alias', deleted: ['name', 'collection'] },
});
