import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ADMIN_TOKEN, appsOnOneDatabase, beforeInstant, type SharedDatabase } from '../helpers.js';
import { backend } from '../database.js';

// Requests the server numbers as they arrive share one read of the tables' versions (db/arrivals.ts):
// the users index checks it before answering from memory, and the token lookup before using a token
// row it holds. Both must still see every write committed before the request arrived, made by
// another instance too. Only a request through the server is numbered (inject is not), so these
// tests talk HTTP to `reader`, and write through `writer` (another instance on the same database).

/** Waits until the clock is past `instant` (ms since the epoch): a deadline, not a guess at how long things take. */
async function past(instant: number): Promise<void> {
  while (Date.now() <= instant) await new Promise((resolve) => setTimeout(resolve, instant - Date.now() + 1));
}

describe(`versions shared by the requests that arrived before a read (${backend})`, () => {
  let shared: SharedDatabase;
  let writer: FastifyInstance;
  let reader: FastifyInstance;
  let base: string;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    shared = await appsOnOneDatabase({}, { usersIndex: true });
    [writer, reader] = shared.apps as [FastifyInstance, FastifyInstance];
    await reader.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(reader.server.address() as AddressInfo).port}`;
  });
  afterAll(() => shared?.close());

  const get = (path: string, token: string) => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  async function newToken(body: object): Promise<{ id: number; token: string }> {
    const res = await writer.inject({ method: 'POST', url: '/tokens', headers: admin, payload: body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: number; token: string }>();
  }

  it('a token revoked or expired is refused by the next request, though its row was held', async () => {
    for (let round = 0; round < 15; round++) {
      const { id, token } = await newToken({ scopes: ['read'], name: `held ${round}` });
      for (let i = 0; i < 3; i++) expect((await get('/artists?size=1', token)).status).toBe(200);
      // Another token written meanwhile: every row held is read again, this one still works.
      const other = await newToken({ scopes: ['read'], name: `other ${round}` });
      const [again, theOther] = await Promise.all([get('/artists?size=1', token), get('/artists?size=1', other.token)]);
      expect([again.status, theOther.status]).toEqual([200, 200]);
      expect((await writer.inject({ method: 'DELETE', url: `/tokens/${id}`, headers: admin })).statusCode).toBe(204);
      const refused = await Promise.all([get('/artists?size=1', token), get('/artists?size=1', token), get('/artists?size=1', other.token)]);
      expect(refused.map((r) => r.status)).toEqual([401, 401, 200]);
      expect(((await refused[0].json()) as { code: string }).code).toBe('UNAUTHORIZED');
    }
    // Expiry changes no row: the held row's expiry is compared with the clock at each request. Its row
    // held before it expires: with an expiry further ahead again if the machine took longer than that.
    const { instant: expiresAt, value: token } = await beforeInstant(1500, async (instant) => {
      const { token } = await newToken({ scopes: ['read'], name: 'expiring', expires_at: new Date(instant).toISOString() });
      expect((await get('/artists?size=1', token)).status).toBe(200);
      expect((await get('/artists?size=1', token)).status).toBe(200);
      return token;
    });
    await past(expiresAt);
    const expired = await get('/artists?size=1', token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('an alias redefined or deleted through another instance: the next requests take its new filters, or 404', async () => {
    const created = await writer.inject({
      method: 'POST',
      url: '/users',
      headers: admin,
      payload: ['Alpha Land', 'Beta Land', 'Gamma Land'].map((country, i) => ({
        first_name: `Aliased${i}`,
        last_name: 'Shared',
        email: `aliased${i}@example.com`,
        age: 40 + i,
        status: 'active',
        country,
      })),
    });
    expect(created.statusCode, created.body).toBe(201);
    const put = async (query: string) =>
      expect((await writer.inject({ method: 'PUT', url: '/aliases/users/held-alias', headers: admin, payload: { query } })).statusCode).toBeLessThan(300);
    const names = async () => {
      const answers = await Promise.all([get('/users/held-alias?sort=id', ADMIN_TOKEN), get('/users/held-alias?sort=id&size=5', ADMIN_TOKEN)]);
      return Promise.all(
        answers.map(async (res) => (res.status === 200 ? ((await res.json()) as { first_name: string }[]).map((u) => u.first_name).join() : res.status)),
      );
    };
    for (const [round, country] of ['alpha land', 'beta land', 'gamma land', 'alpha land', 'beta land'].entries()) {
      await put(`lives_in=${country}&status=active`);
      const expected = `Aliased${['alpha land', 'beta land', 'gamma land'].indexOf(country)}`;
      expect(await names(), `round ${round}`).toEqual([expected, expected]);
      expect(await names(), `round ${round}, again`).toEqual([expected, expected]);
    }
    expect((await writer.inject({ method: 'DELETE', url: '/aliases/users/held-alias', headers: admin })).statusCode).toBe(204);
    expect(await names()).toEqual([404, 404]);
  });

  it("a user written through another instance is in the next lists, all of those sent at once, from the reader's index", async () => {
    const created = await writer.inject({
      method: 'POST',
      url: '/users',
      headers: admin,
      payload: Array.from({ length: 40 }, (_, i) => ({
        first_name: `Arrival${i}`,
        last_name: 'Shared',
        email: `arrival${i}@example.com`,
        age: 20 + (i % 10),
        status: 'active',
        country: 'Arrival Land',
      })),
    });
    expect(created.statusCode, created.body).toBe(201);
    const ids = created.json<{ id: number }[]>().map((u) => u.id);
    await reader.usersIndex!.loaded;
    expect(reader.usersIndex!.state).toBe('ready');
    const answered = () => reader.metrics.getSingleMetric('users_index_lists_total')?.get();
    const byIndex = async () => (await answered())?.values.find((v) => v.labels.by === 'index')?.value ?? 0;
    const before = await byIndex();
    for (let round = 0; round < 25; round++) {
      const id = ids[round % ids.length]!;
      const age = 100 + round;
      const patched = await writer.inject({
        method: 'PATCH',
        url: `/users/${id}`,
        headers: admin,
        payload: { age, status: round % 2 ? 'inactive' : 'active' },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      const lists = await Promise.all(
        [
          `older_than=${age - 1}&younger_than=${age + 1}`,
          `lives_in=arrival%20land&sort=age:desc&size=1`,
          `lives_in=arrival%20land&status=${round % 2 ? 'inactive' : 'active'}&sort=age:desc,id&size=1`,
        ].map((q) => get(`/users?${q}`, ADMIN_TOKEN)),
      );
      for (const res of lists) {
        expect(res.status).toBe(200);
        expect(((await res.json()) as { id: number; age: number }[]).map((u) => [u.id, u.age])).toEqual([[id, age]]);
      }
    }
    expect((await byIndex()) - before).toBe(75);
  });
  it("a user written or deleted through another instance is the next GET /users/{id} of it, body and ETag, from the reader's index", async () => {
    const created = await writer.inject({
      method: 'POST',
      url: '/users',
      headers: admin,
      payload: Array.from({ length: 8 }, (_, i) => ({
        first_name: `Single${i}`,
        last_name: 'Shared',
        email: `single${i}@example.com`,
        age: 30 + i,
        status: 'active',
        country: 'Single Land',
      })),
    });
    expect(created.statusCode, created.body).toBe(201);
    const ids = created.json<{ id: number }[]>().map((u) => u.id);
    await reader.usersIndex!.loaded;
    expect(reader.usersIndex!.state).toBe('ready');
    const answered = () => reader.metrics.getSingleMetric('users_index_single_users_total')?.get();
    const byIndex = async () => (await answered())?.values.find((v) => v.labels.by === 'index')?.value ?? 0;
    const before = await byIndex();
    for (let round = 0; round < 20; round++) {
      const id = ids[round % ids.length]!;
      const patched = await writer.inject({ method: 'PATCH', url: `/users/${id}`, headers: admin, payload: { age: 60 + round } });
      expect(patched.statusCode, patched.body).toBe(200);
      // Sent at once: each one arrived after the PATCH was acknowledged.
      const read = await Promise.all([get(`/users/${id}`, ADMIN_TOKEN), get(`/users/${id}`, ADMIN_TOKEN)]);
      for (const res of read) {
        expect(res.status).toBe(200);
        expect(res.headers.get('etag')).toBe(patched.headers.etag);
        expect(await res.json()).toEqual(patched.json());
      }
    }
    expect((await byIndex()) - before).toBe(40);
    const gone = ids[0]!;
    expect((await writer.inject({ method: 'DELETE', url: `/users/${gone}`, headers: admin })).statusCode).toBe(204);
    expect((await get(`/users/${gone}`, ADMIN_TOKEN)).status).toBe(404);
  });
});
