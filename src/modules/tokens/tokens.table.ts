import type { Generated } from 'kysely';

// The tokens table, stated once: its row and what a token is shown as (never its hash). The token
// lookup of every request (auth/token-lookup.ts) reads only what it needs.

export interface TokenTable {
  id: Generated<number>;
  name: string | null;
  token_hash: string;
  scopes: string;
  created_at: string;
  revoked_at: string | null;
  /** Past this ISO time the token is refused; null: it never expires. */
  expires_at: string | null;
}

export const TOKENS = {
  table: 'tokens',
  /** What a token is shown as (GET /tokens, POST /tokens besides the secret), the scopes as stored. */
  fields: ['id', 'name', 'scopes', 'created_at', 'expires_at'],
} as const;
