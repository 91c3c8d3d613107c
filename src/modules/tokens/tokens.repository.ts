import type { Db } from '../../db/database.js';
import { param } from '../../db/precompiled.js';
import { parseScopes, type Scope } from '../../auth/scopes.js';
import { listPage, type ListPlan, type ListResult } from '../../query/index.js';
import { generateToken, hashToken } from '../../auth/tokens.js';
import { readUntil } from '../../db/reads.js';
import { TOKENS } from './tokens.table.js';

export interface StoredToken {
  id: number;
  name: string | null;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
}

/**
 * The first instant after `now` at which a token that still works expires: a list of the active
 * tokens changes then without a write (db/reads.ts readUntil).
 */
async function readUntilNextExpiry(db: Db, now: Date): Promise<void> {
  const row = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.min('expires_at').as('next'))
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  if (row?.next) readUntil(Date.parse(row.next));
}

async function insertToken(db: Db, hash: string, scopes: readonly Scope[], name: string | null, expiresAt: Date | null): Promise<StoredToken> {
  const created_at = new Date().toISOString();
  const row = await db
    .insertInto('tokens')
    .values({ token_hash: hash, scopes: scopes.join(','), name, created_at, expires_at: expiresAt?.toISOString() ?? null })
    .returning(TOKENS.fields)
    .executeTakeFirstOrThrow();
  return { ...row, scopes: parseScopes(row.scopes) };
}

/** Creates a token; the secret is returned here and never again. */
export async function createToken(
  db: Db,
  scopes: readonly Scope[],
  name: string | null,
  expiresAt: Date | null = null,
): Promise<StoredToken & { token: string }> {
  const token = generateToken();
  const stored = await insertToken(db, hashToken(token), [...new Set(scopes)], name, expiresAt);
  return { ...stored, token };
}

/**
 * First start on an empty database without CATALOGUE_ADMIN_TOKEN: create an admin token so the
 * operator can get in. Returns the secret to print once, or undefined when nothing was created.
 */
export async function bootstrapAdminToken(db: Db, configuredAdminToken: string | undefined): Promise<string | undefined> {
  if (configuredAdminToken) return undefined;
  if ((await countTokens(db)) > 0) return undefined;
  const created = await createToken(db, ['admin'], 'bootstrap admin');
  return created.token;
}

/** Tokens that still work: not revoked, not expired. */
export async function listTokens(db: Db, now = new Date()): Promise<StoredToken[]> {
  const rows = await db
    .selectFrom('tokens')
    .select(TOKENS.fields)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.toISOString())]))
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, scopes: parseScopes(r.scopes) }));
}

/**
 * One page of the active tokens (query/ conventions) and their total; `now` decides which have
 * expired, and the answer holds until the next of them expires.
 */
export async function pageActiveTokens(db: Db, plan: ListPlan, now = new Date()): Promise<ListResult<StoredToken>> {
  const base = () =>
    db
      .selectFrom('tokens')
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', param<string>('now'))]));
  const { rows, ...found } = await listPage(
    db,
    {
      key: 'active-tokens',
      table: 'tokens',
      values: { now: now.toISOString() },
      base,
      rows: () => base().select(TOKENS.fields),
    },
    plan,
  );
  await readUntilNextExpiry(db, now);
  return { rows: rows.map((r) => ({ ...r, scopes: parseScopes(r.scopes) })), ...found };
}

/** The token if it still works (not revoked, not expired), as the list shows it; the answer holds until it expires. */
export async function getToken(db: Db, id: number, now = new Date()): Promise<StoredToken | undefined> {
  const row = await db
    .selectFrom('tokens')
    .select(TOKENS.fields)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.toISOString())]))
    .executeTakeFirst();
  if (row?.expires_at) readUntil(Date.parse(row.expires_at));
  return row && { ...row, scopes: parseScopes(row.scopes) };
}

/** Ids a statement names at most: far below either backend's limit on bound values. */
const IDS_PER_STATEMENT = 500;

/**
 * Of these stored tokens, the ones that still work (not revoked, not expired at `now`), each with when
 * it expires (null: never). Open event streams ask it before they send (modules/events).
 */
export async function activeTokens(db: Db, ids: readonly number[], now = new Date()): Promise<Map<number, string | null>> {
  const active = new Map<number, string | null>();
  for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('tokens')
      .select(['id', 'expires_at'])
      .where('id', 'in', ids.slice(i, i + IDS_PER_STATEMENT))
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.toISOString())]))
      .execute();
    for (const row of rows) active.set(row.id, row.expires_at);
  }
  return active;
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
  const row = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
