import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN } from '../helpers.js';

// Two service instances over one PostgreSQL database, talked to over real HTTP as a load balancer
// would: they share nothing but the database.

let database: TestDatabase;
const apps: FastifyInstance[] = [];
const urls: string[] = [];

beforeAll(async () => {
  database = await freshDatabase('postgres');
  for (let i = 0; i < 2; i++) {
    const app = await buildApp(makeConfig({ databaseUrl: database.url, logLevel: 'silent', adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0, pgPoolSize: 4 }));
    urls.push(await app.listen({ host: '127.0.0.1', port: 0 }));
    apps.push(app);
  }
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await database.drop();
});

async function call(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('two instances on one PostgreSQL database', () => {
  it('accept a token created through the other instance', async () => {
    const created = await call(urls[0]!, ADMIN_TOKEN, 'POST', '/tokens', { scopes: ['read'], name: 'shared' });
    expect(created.status).toBe(201);
    const res = await fetch(`${urls[1]}/artists/999999`, { headers: { authorization: `Bearer ${created.body.token as string}` } });
    expect(res.status).toBe(404);
    const revoked = await fetch(`${urls[1]}/tokens/${created.body.id as number}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(revoked.status).toBe(204);
    const after = await fetch(`${urls[0]}/artists/999999`, { headers: { authorization: `Bearer ${created.body.token as string}` } });
    expect(after.status).toBe(401);
  });

  it('lose no concurrent write, assign no id twice, and each sees every committed write', async () => {
    const perInstance = 30;
    const writes = Array.from({ length: perInstance * 2 }, (_, i) => {
      const base = urls[i % 2]!;
      return call(base, ADMIN_TOKEN, 'POST', '/artists', { name: `Artist ${i}`, image: `https://img.example.com/${i}.jpg` }).then(async (artist) => {
        expect(artist.status).toBe(201);
        // The album goes through the other instance, right after the artist was committed.
        const album = await call(urls[(i + 1) % 2]!, ADMIN_TOKEN, 'POST', `/artists/${artist.body.id as number}/albums`, {
          name: `Album ${i}`,
          year: 2000 + (i % 20),
          image: `https://img.example.com/a${i}.jpg`,
        });
        expect(album.status).toBe(201);
        return { i, artistId: artist.body.id as number, albumId: album.body.id as number };
      });
    });
    const done = await Promise.all(writes);

    const artistIds = done.map((d) => d.artistId);
    const albumIds = done.map((d) => d.albumId);
    expect(new Set(artistIds).size).toBe(perInstance * 2);
    expect(new Set(albumIds).size).toBe(perInstance * 2);
    for (const id of [...artistIds, ...albumIds]) expect(Number.isInteger(id) && id > 0).toBe(true);

    for (const { i, artistId, albumId } of done) {
      for (const base of urls) {
        const res = await call(base, ADMIN_TOKEN, 'GET', `/artists/${artistId}/albums`);
        expect(res).toEqual({
          status: 200,
          body: {
            name: `Artist ${i}`,
            image: `https://img.example.com/${i}.jpg`,
            albums: [{ id: albumId, name: `Album ${i}`, year: 2000 + (i % 20), image: `https://img.example.com/a${i}.jpg` }],
          },
        });
      }
    }
  });
});
