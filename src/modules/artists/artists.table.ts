import type { ColumnType, Generated } from 'kysely';
import { defineTable } from '../table.js';

// The artists table, stated once (modules/table.ts says who reads it). Shipped migrations keep frozen
// copies of what they needed; a field added here comes with a migration and the schemas.

export interface ArtistTable {
  id: Generated<number>;
  name: string;
  name_key: string;
  image: string;
  version: ColumnType<number, number | undefined, number>;
}

export const ARTISTS = defineTable({
  table: 'artists',
  fields: ['id', 'name', 'image'],
  names: ['name'],
  event: { type: 'artist', deleted: ['id'] },
});
