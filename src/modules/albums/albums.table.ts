import type { ColumnType, Generated } from 'kysely';
import { defineTable } from '../table.js';

// The albums table, stated once (modules/table.ts says who reads it). Shipped migrations keep frozen
// copies of what they needed; a field added here comes with a migration and the schemas.

export interface AlbumTable {
  id: Generated<number>;
  artist_id: number;
  name: string;
  name_key: string;
  year: number;
  image: string;
  version: ColumnType<number, number | undefined, number>;
}

export const ALBUMS = defineTable({
  table: 'albums',
  parent: 'artist_id',
  fields: ['id', 'name', 'year', 'image'],
  names: ['name'],
  event: { type: 'album', deleted: ['id'] },
});
