import type { Db } from '../../db/database.js';
import type { Scope } from '../../auth/scopes.js';
import { generateToken, hashToken } from '../../auth/tokens.js';
import { countTokens, insertToken, type StoredToken } from './tokens.repository.js';

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
