import type { Db } from '../../db/database.js';
import { precompiled } from '../../db/precompiled.js';
import { parseScopes, type Scope } from '../../auth/scopes.js';

export interface StoredToken {
  id: number;
  name: string | null;
  scopes: Scope[];
  created_at: string;
}

// Runs on every authenticated request.
const activeTokenByHash = precompiled<{ id: number; scopes: string }, [hash: string]>((db) =>
  db.selectFrom('tokens').select(['id', 'scopes']).where('token_hash', '=', '').where('revoked_at', 'is', null),
);

export async function findActiveTokenByHash(db: Db, hash: string): Promise<{ id: number; scopes: Scope[] } | undefined> {
  const row = await activeTokenByHash.first(db, hash);
  return row && { id: row.id, scopes: parseScopes(row.scopes) };
}

export async function insertToken(db: Db, hash: string, scopes: readonly Scope[], name: string | null): Promise<StoredToken> {
  const created_at = new Date().toISOString();
  const row = await db
    .insertInto('tokens')
    .values({ token_hash: hash, scopes: scopes.join(','), name, created_at })
    .returning(['id', 'name', 'scopes', 'created_at'])
    .executeTakeFirstOrThrow();
  return { ...row, scopes: parseScopes(row.scopes) };
}

export async function listActiveTokens(db: Db): Promise<StoredToken[]> {
  const rows = await db
    .selectFrom('tokens')
    .select(['id', 'name', 'scopes', 'created_at'])
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, scopes: parseScopes(r.scopes) }));
}

export async function findActiveToken(db: Db, id: number): Promise<StoredToken | undefined> {
  const row = await db
    .selectFrom('tokens')
    .select(['id', 'name', 'scopes', 'created_at'])
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && { ...row, scopes: parseScopes(row.scopes) };
}

/** Revokes at once; true when an active token was revoked. */
export async function revokeToken(db: Db, id: number): Promise<boolean> {
  const result = await db
    .updateTable('tokens')
    .set({ revoked_at: new Date().toISOString() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function countTokens(db: Db): Promise<number> {
  const row = await db.selectFrom('tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
