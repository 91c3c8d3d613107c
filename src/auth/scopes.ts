// Scopes are ordered: admin implies write implies read.
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

export function grants(held: readonly Scope[], needed: Scope): boolean {
  return held.some((s) => RANK[s] >= RANK[needed]);
}

export function parseScopes(stored: string): Scope[] {
  return stored.split(',').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
}
