import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { token } from '../../src/cli/token.js';
import { cliIo } from './io.js';

describe('music-catalogue token', () => {
  it('creates a token the API accepts, lists it without its secret, and revokes it at once', async () => {
    const create = cliIo();
    expect(await token.run(['create', '--scopes', 'read', '--name', 'reporting'], create.ctx)).toBe(0);
    const secret = create.stdout().trim();
    expect(secret).toMatch(/^mc_[A-Za-z0-9_-]{43}$/);
    expect(create.stderr()).toContain('created token 1 (read)');

    const app = await buildApp(makeConfig({ databaseUrl: create.databaseUrl, logLevel: 'silent' }));
    try {
      const get = () => app.inject({ method: 'GET', url: '/artists/1', headers: { authorization: `Bearer ${secret}` } });
      expect((await get()).statusCode).toBe(404); // authenticated: the artist just does not exist

      const list = cliIo({ databaseUrl: create.databaseUrl });
      expect(await token.run(['list', '--json'], list.ctx)).toBe(0);
      const listed = JSON.parse(list.stdout()) as { id: number; name: string; scopes: string[] }[];
      expect(listed).toEqual([{ id: 1, name: 'reporting', scopes: ['read'], created_at: expect.any(String), expires_at: null }]);
      expect(list.stdout()).not.toContain(secret);

      const revoke = cliIo({ databaseUrl: create.databaseUrl });
      expect(await token.run(['revoke', '1'], revoke.ctx)).toBe(0);
      expect((await get()).statusCode).toBe(401);
      expect(await token.run(['revoke', '1'], cliIo({ databaseUrl: create.databaseUrl }).ctx)).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('creates a token that expires with --expires-in', async () => {
    const create = cliIo();
    const before = Date.now();
    expect(await token.run(['create', '--scopes', 'metrics', '--name', 'scraper', '--expires-in', '30d'], create.ctx)).toBe(0);
    const list = cliIo({ databaseUrl: create.databaseUrl });
    expect(await token.run(['list', '--json'], list.ctx)).toBe(0);
    const [listed] = JSON.parse(list.stdout()) as { scopes: string[]; expires_at: string }[];
    expect(listed!.scopes).toEqual(['metrics']);
    const expires = Date.parse(listed!.expires_at) - before;
    expect(expires).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(expires).toBeLessThan(31 * 86_400_000);
    expect(create.stderr()).toContain(`expires ${listed!.expires_at}`);
    await expect(token.run(['create', '--scopes', 'read', '--expires-in', '30'], cliIo().ctx)).rejects.toThrow(
      '--expires-in must be a positive number with a unit',
    );
    await expect(token.run(['create', '--scopes', 'read', '--expires-in', '0d'], cliIo().ctx)).rejects.toThrow('--expires-in');
  });

  it('refuses unknown scopes and a missing action as usage errors', async () => {
    await expect(token.run(['create', '--scopes', 'root'], cliIo().ctx)).rejects.toThrow('unknown scope "root"');
    await expect(token.run(['create'], cliIo().ctx)).rejects.toThrow('--scopes is required');
    await expect(token.run([], cliIo().ctx)).rejects.toThrow('an action is required');
    await expect(token.run(['revoke', 'abc'], cliIo().ctx)).rejects.toThrow('one token id');
  });
});
