import { SCOPES, type Scope } from '../auth/scopes.js';
import { listActiveTokens, revokeToken } from '../modules/tokens/tokens.repository.js';
import { createToken } from '../modules/tokens/tokens.service.js';
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

export const token: Command = {
  summary: 'Create, list or revoke API tokens directly in the database.',
  usage: `music-catalogue token <create|list|revoke> [options]

  token create --scopes read[,write,admin] [--name NAME]
      Create a token and print its secret once (only a hash is stored).
  token list [--json]
      List active tokens (never their secrets).
  token revoke ID
      Revoke a token at once.

Uses DATABASE_URL (migrating it first).`,
  async run(args, ctx) {
    const [action, ...rest] = args;
    if (action === 'create') {
      const { values } = parseOptions(rest, { scopes: { type: 'string' }, name: { type: 'string' } });
      const scopes = scopesOption(values.scopes);
      const name = values.name?.trim() || null;
      if (name && name.length > 100) throw new UsageError('--name must be at most 100 characters');
      const created = await withDatabase(ctx, (c) => createToken(c.db, scopes, name));
      write(ctx.stderr, `created token ${created.id} (${created.scopes.join(',')}); the secret is shown only now:`);
      write(ctx.stdout, created.token);
      return 0;
    }
    if (action === 'list') {
      const { values } = parseOptions(rest, { json: { type: 'boolean' } });
      const tokens = await withDatabase(ctx, (c) => listActiveTokens(c.db));
      if (values.json) write(ctx.stdout, JSON.stringify(tokens));
      else {
        write(ctx.stdout, `${'ID'.padEnd(6)} ${'SCOPES'.padEnd(18)} ${'CREATED'.padEnd(24)} NAME`);
        for (const t of tokens) write(ctx.stdout, `${String(t.id).padEnd(6)} ${t.scopes.join(',').padEnd(18)} ${t.created_at.padEnd(24)} ${t.name ?? ''}`);
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
