import type { ColumnType, Generated } from 'kysely';
import { defineTable } from '../table.js';

// The songs table, stated once (modules/table.ts says who reads it). Shipped migrations keep frozen
// copies of what they needed; a field added here comes with a migration and the schemas.

export interface SongTable {
  id: Generated<number>;
  album_id: number;
  name: string;
  name_key: string;
  time: string;
  version: ColumnType<number, number | undefined, number>;
}

export const SONGS = defineTable({
  table: 'songs',
  parent: 'album_id',
  fields: ['id', 'name', 'time'],
  names: ['name'],
  event: { type: 'song', deleted: ['id'] },
});
