import type { Db } from '../db/database.js';
import { param, precompiled } from '../db/precompiled.js';
import { readTable, readUntil } from '../db/reads.js';
import { stampOf, type TableVersions } from '../db/table-stamps.js';
import { parseScopes, type Scope } from './scopes.js';

// What the request hook (auth.plugin.ts) asks of the tokens table. The tokens resource
// (modules/tokens/) writes and lists them; authentication sits below every resource and reads only this.

// Runs on every authenticated request.
const unrevokedTokenByHash = precompiled<{ id: number; scopes: string; expires_at: string | null }, { hash: string }>((db) =>
  db.selectFrom('tokens').select(['id', 'scopes', 'expires_at']).where('token_hash', '=', param<string>('hash')).where('revoked_at', 'is', null),
);

type TokenRow = { id: number; scopes: string; expires_at: string | null };

/** Per database, rows found by hash, each with the tokens table's version read before it was (at most HELD_ROWS, then anew). */
const held = new WeakMap<Db, Map<string, { row: TokenRow; stamp: string }>>();
const HELD_ROWS = 10_000;

/**
 * The row as the statement would read it, from memory while the tokens table's version is the one
 * read before it was read last (a creation, revocation or deletion of any token moves it): `versions`
 * must have been read after the request arrived (db/arrivals.ts). A hash no token has is not held.
 */
async function heldRow(db: Db, hash: string, versions: TableVersions): Promise<TokenRow | undefined> {
  const stamp = stampOf(versions, ['tokens']);
  let rows = held.get(db);
  const kept = rows?.get(hash);
  if (kept && kept.stamp === stamp) {
    readTable('tokens');
    return kept.row;
  }
  const row = await unrevokedTokenByHash.first(db, { hash });
  if (!rows) held.set(db, (rows = new Map<string, { row: TokenRow; stamp: string }>()));
  if (!row) rows.delete(hash);
  else {
    if (rows.size >= HELD_ROWS) rows.clear();
    rows.set(hash, { row, stamp });
  }
  return row;
}

/**
 * The token with this hash unless revoked, with whether it has expired (the caller says which 401):
 * from its expiry instant on, to the millisecond, compared as instants (not as text). An answer given
 * to it holds only until then (db/reads.ts readUntil): a stored answer is not served past it.
 */
export async function findTokenByHash(
  db: Db,
  hash: string,
  now = new Date(),
  versions?: TableVersions,
): Promise<{ id: number; scopes: Scope[]; expired: boolean } | undefined> {
  const row = versions ? await heldRow(db, hash, versions) : await unrevokedTokenByHash.first(db, { hash });
  if (!row) return undefined;
  const expiry = row.expires_at === null ? Infinity : Date.parse(row.expires_at);
  readUntil(expiry);
  // An expiry that does not parse is taken as past (NaN > now is false): refused rather than trusted.
  return { id: row.id, scopes: parseScopes(row.scopes), expired: !(expiry > now.getTime()) };
}
