import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { startProxy, type Proxy } from './proxy.js';

// PostgreSQL: a named statement is described (its rows' columns and types) on its first run on a
// connection only; later runs send Bind, Execute and Sync, and read the rows with the columns first
// described (db/connect.ts, NamedQuery). Seen on the wire: the app talks to the server through a
// proxy that reads the messages the driver sends.

/** Frontend messages by type ('D' Describe, 'E' Execute, 'P' Parse...), counted while `counting`. */
const sent = new Map<string, number>();
let counting = false;

/** A parser of one connection's frontend stream: the startup message (no type byte), then typed messages. */
function frontendMessages() {
  let pending = Buffer.alloc(0);
  let started = false;
  return (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (!started) {
        if (pending.length < 4) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        pending = pending.subarray(length);
        started = true;
        continue;
      }
      if (pending.length < 5) return;
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      const type = String.fromCharCode(pending[0]!);
      if (counting) sent.set(type, (sent.get(type) ?? 0) + 1);
      pending = pending.subarray(1 + length);
    }
  };
}

let database: TestDatabase;
let proxy: Proxy;
let app: FastifyInstance;
const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  database = await freshDatabase('postgres');
  const target = new URL(database.url);
  proxy = await startProxy(target.hostname, Number(target.port || 5432), { fromClient: frontendMessages });
  const viaProxy = new URL(database.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  // One pooled connection: every statement runs on the session that prepared it; no stored answers.
  const config = makeConfig({
    databaseUrl: viaProxy.toString(),
    adminToken: ADMIN_TOKEN,
    rateLimitPerMinute: 0,
    pgPoolSize: 1,
    responseCacheBytes: 0,
    logLevel: 'silent',
  });
  app = await buildApp(config);
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await proxy?.close();
  await database?.drop();
});

describe('named statements on PostgreSQL', () => {
  it('are described on their first run only, and answer as before with the columns first described', async () => {
    const artists: { id: number; name: string; image: string }[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/artists',
        headers,
        payload: { name: `Described ${i}`, image: `https://img.example.com/${i}.jpg` },
      });
      expect(res.statusCode).toBe(201);
      artists.push({ id: res.json<{ id: number }>().id, name: `Described ${i}`, image: `https://img.example.com/${i}.jpg` });
    }
    const get = async (a: { id: number; name: string; image: string }) => {
      const res = await app.inject({ method: 'GET', url: `/artists/${a.id}`, headers });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ name: a.name, image: a.image });
      const albums = await app.inject({ method: 'GET', url: `/artists/${a.id}/albums`, headers });
      expect(albums.statusCode).toBe(200);
      expect(albums.json()).toEqual({ name: a.name, image: a.image, albums: [] });
    };
    // The first runs of each statement: unnamed, then named (parsed and described).
    for (const a of artists.slice(0, 3)) await get(a);
    counting = true;
    for (const a of artists.slice(3)) await get(a);
    counting = false;
    const executes = sent.get('E') ?? 0;
    expect(executes).toBeGreaterThanOrEqual(artists.length - 3);
    // Before: every Execute came with its Describe.
    expect(sent.get('D') ?? 0, JSON.stringify([...sent])).toBeLessThan(executes);
  });
});
