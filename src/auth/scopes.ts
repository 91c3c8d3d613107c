// Scopes: admin implies write implies read. `metrics` stands apart: it reads GET /metrics and nothing
// else (a Prometheus scraper needs no catalogue access); admin grants it too.
export const SCOPES = ['read', 'write', 'admin', 'metrics'] as const;
export type Scope = (typeof SCOPES)[number];

const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3, metrics: 0 };

export function grants(held: readonly Scope[], needed: Scope): boolean {
  if (needed === 'metrics') return held.includes('metrics') || held.includes('admin');
  return held.some((s) => RANK[s] >= RANK[needed]);
}

/** A route that names a scope is an API route: it needs a token (public routes name none). */
export function needsToken(routeConfig: { scope?: Scope } | undefined): boolean {
  return routeConfig?.scope !== undefined;
}

export function parseScopes(stored: string): Scope[] {
  return stored.split(',').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
}
