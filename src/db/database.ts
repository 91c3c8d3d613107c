import type { Generated, Kysely } from 'kysely';
import type { ArtistTable } from '../modules/artists/artists.table.js';
import type { AlbumTable } from '../modules/albums/albums.table.js';
import type { SongTable } from '../modules/songs/songs.table.js';
import type { UserTable } from '../modules/users/users.table.js';
import type { AliasTable } from '../modules/aliases/aliases.table.js';
import type { TokenTable } from '../modules/tokens/tokens.table.js';

export type { ArtistTable, AlbumTable, SongTable, UserTable, AliasTable, TokenTable };

// Table types: what Kysely checks queries against. A resource's row is stated in its table module
// (src/modules/<x>/<x>.table.ts) with the rest of what the resource's table is; the others here.

export interface IdempotencyKeyTable {
  id: Generated<number>;
  /** Who sent the key: keys of different callers never meet. */
  caller: string;
  key: string;
  /** Hash of method, path and body: the same key with another request is a conflict. */
  fingerprint: string;
  /** Null while the first request is still being processed. */
  status: number | null;
  /** JSON object of the response headers to replay (Location, ETag). */
  headers: string | null;
  body: string | null;
  created_at: string;
  expires_at: string;
  /** The request holding an unfinished reservation (random per request); null once answered. */
  owner: string | null;
  /** When an unfinished reservation lapses unless its request renews it (ISO time). */
  lease_until: string | null;
}

/** Users per (status, country, age), kept by triggers (migrations 20261124T0100, 20261126T0100): the country as its fold and its key. */
export interface UsersCountsTable {
  status: string;
  country_fold: string;
  country_key: string;
  age: number;
  n: number;
}

/** Users per (first_name or last_name, the name's key), kept by triggers (migrations 20261124T0900, 20261126T0100). */
export interface UsersNameCountsTable {
  field: string;
  /** The name's collation key. */
  name: string;
  n: number;
}

/** A counter per table, moved by every statement that writes it (migration 20261124T0100). */
export interface TableVersionsTable {
  name: string;
  version: number | string | bigint;
}

export interface Database {
  artists: ArtistTable;
  albums: AlbumTable;
  songs: SongTable;
  tokens: TokenTable;
  users: UserTable;
  aliases: AliasTable;
  idempotency_keys: IdempotencyKeyTable;
  users_counts: UsersCountsTable;
  users_name_counts: UsersNameCountsTable;
  table_versions: TableVersionsTable;
}

export type { Dialect } from './dialect.js';

/** The database handle every repository takes first. */
export type Db = Kysely<Database>;
