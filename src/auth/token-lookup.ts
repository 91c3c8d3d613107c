import type { Db } from '../db/database.js';
import { param, precompiled } from '../db/precompiled.js';
import { readUntil } from '../db/reads.js';
import type { TableVersions } from '../db/table-stamps.js';
import { HeldRows } from '../db/arrivals.js';
import { parseScopes, type Scope } from './scopes.js';

// What the request hook (auth.plugin.ts) asks of the tokens table. The tokens resource
// (modules/tokens/) writes and lists them; authentication sits below every resource and reads only this.

// Runs on every authenticated request.
const unrevokedTokenByHash = precompiled<{ id: number; scopes: string; expires_at: string | null }, { hash: string }>((db) =>
  db.selectFrom('tokens').select(['id', 'scopes', 'expires_at']).where('token_hash', '=', param<string>('hash')).where('revoked_at', 'is', null),
);

type TokenRow = { id: number; scopes: string; expires_at: string | null };

/** Token rows by hash, while the versions of the tables their read touched are those read before it (db/arrivals.ts). */
const held = new HeldRows<TokenRow>();

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
  const read = () => unrevokedTokenByHash.first(db, { hash });
  // A request the server numbered: `versions` were read after it arrived, and a row held under them is the row.
  const row = versions ? await held.get(db, hash, versions, read) : await read();
  if (!row) return undefined;
  const expiry = row.expires_at === null ? Infinity : Date.parse(row.expires_at);
  readUntil(expiry);
  // An expiry that does not parse is taken as past (NaN > now is false): refused rather than trusted.
  return { id: row.id, scopes: parseScopes(row.scopes), expired: !(expiry > now.getTime()) };
}
