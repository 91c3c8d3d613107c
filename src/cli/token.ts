import { SCOPES, type Scope } from '../auth/scopes.js';
import { createToken, listTokens, revokeToken } from '../modules/tokens/tokens.repository.js';
import { UsageError, parseOptions, write, type Command } from './command.js';
import { withDatabase } from './database.js';

function scopesOption(raw: string | undefined): Scope[] {
  if (!raw) throw new UsageError('--scopes is required, e.g. --scopes read or --scopes read,write');
  const scopes = raw.split(',').map((s) => s.trim());
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) throw new UsageError(`unknown scope "${s}"; scopes are ${SCOPES.join(', ')}`);
  }
  return [...new Set(scopes)] as Scope[];
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--expires-in 30d` (s, m, h or d): the time the token stops working, or null without the option. */
function expiresInOption(raw: string | undefined, now = Date.now()): Date | null {
  if (raw === undefined) return null;
  const match = /^([1-9]\d{0,5})([smhd])$/.exec(raw.trim());
  if (!match) throw new UsageError(`--expires-in must be a positive number with a unit s, m, h or d (e.g. 90d), got "${raw}"`);
  return new Date(now + Number(match[1]) * UNIT_MS[match[2]!]!);
}

export const token: Command = {
  summary: 'Create, list or revoke API tokens directly in the database.',
  usage: `music-catalogue token <create|list|revoke> [options]

  token create --scopes read[,write,admin,metrics] [--name NAME] [--expires-in 90d]
      Create a token and print its secret once (only a hash is stored). metrics: reads /metrics
      and nothing else. --expires-in (s, m, h or d): the token is refused from then on.
  token list [--json]
      List active tokens (never their secrets).
  token revoke ID
      Revoke a token at once.

Uses DATABASE_URL (migrating it first).`,
  async run(args, ctx) {
    const [action, ...rest] = args;
    if (action === 'create') {
      const { values } = parseOptions(rest, { scopes: { type: 'string' }, name: { type: 'string' }, 'expires-in': { type: 'string' } });
      const scopes = scopesOption(values.scopes);
      const name = values.name?.trim() || null;
      if (name && name.length > 100) throw new UsageError('--name must be at most 100 characters');
      const expiresAt = expiresInOption(values['expires-in']);
      const created = await withDatabase(ctx, (c) => createToken(c.db, scopes, name, expiresAt));
      const until = created.expires_at ? `, expires ${created.expires_at}` : '';
      write(ctx.stderr, `created token ${created.id} (${created.scopes.join(',')}${until}); the secret is shown only now:`);
      write(ctx.stdout, created.token);
      return 0;
    }
    if (action === 'list') {
      const { values } = parseOptions(rest, { json: { type: 'boolean' } });
      const tokens = await withDatabase(ctx, (c) => listTokens(c.db));
      if (values.json) write(ctx.stdout, JSON.stringify(tokens));
      else {
        write(ctx.stdout, `${'ID'.padEnd(6)} ${'SCOPES'.padEnd(18)} ${'CREATED'.padEnd(24)} ${'EXPIRES'.padEnd(24)} NAME`);
        for (const t of tokens) {
          write(
            ctx.stdout,
            `${String(t.id).padEnd(6)} ${t.scopes.join(',').padEnd(18)} ${t.created_at.padEnd(24)} ${(t.expires_at ?? 'never').padEnd(24)} ${t.name ?? ''}`,
          );
        }
      }
      return 0;
    }
    if (action === 'revoke') {
      const { positionals } = parseOptions(rest, {}, true);
      const id = positionals[0];
      if (positionals.length !== 1 || !id || !/^[1-9]\d{0,9}$/.test(id)) throw new UsageError('token revoke takes one token id');
      const revoked = await withDatabase(ctx, (c) => revokeToken(c.db, Number(id)));
      if (!revoked) {
        write(ctx.stderr, `no active token with id ${id}`);
        return 1;
      }
      write(ctx.stdout, `revoked token ${id}`);
      return 0;
    }
    throw new UsageError(action ? `unknown action "${action}"` : 'an action is required: create, list or revoke');
  },
};
