import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ADMIN_TOKEN, appsOnOneDatabase, client, type SharedDatabase } from '../helpers.js';
import { answerProblems } from '../openapi-check.js';
import { backend } from '../database.js';

// A users row written by SQL outside the API (psql, sqlite3) may hold what the API never writes: an
// age outside 0..150, a status of its own. Every read path answers it as stored (docs/stored-data.md),
// with the users index on and off (the index's count table is over ages 0..150: the others are counted
// one by one), and the answers of the two are the same. The OpenAPI document states what the API
// writes, so those values are outside it: they are checked against what is stored, and every answer
// is checked against the document with them put back as the API wrote them (the rest of it, the rows
// the API wrote included, matches the document as it is).

describe(`users rows written outside the API (${backend})`, () => {
  let shared: SharedDatabase;
  let indexed: FastifyInstance;
  let plain: FastifyInstance;

  beforeAll(async () => {
    shared = await appsOnOneDatabase({ usersIndex: true }, { usersIndex: false });
    [indexed, plain] = shared.apps as [FastifyInstance, FastifyInstance];
    await indexed.usersIndex!.loaded;
  });
  afterAll(() => shared?.close());

  it('ages outside 0..150 and a status of its own are answered as stored by lists, aliases, filters, sorts and single users', async () => {
    const api = client(plain, ADMIN_TOKEN);
    const ids: number[] = [];
    const written = [30, 20, 40, 25, 33];
    for (const [i, age] of written.entries()) {
      const res = await api.post('/users', { first_name: `U${i}`, last_name: 'Odd', email: `odd${i}@example.com`, age, status: 'active', country: 'Brazil' });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json<{ id: number }>().id);
    }
    const stored: Record<number, number> = { [ids[0]!]: 200, [ids[1]!]: -1, [ids[2]!]: 151, [ids[3]!]: 100000 };
    for (const [id, age] of Object.entries(stored)) await sql`update users set age = ${age} where id = ${Number(id)}`.execute(plain.db);
    await sql`update users set status = 'suspended' where id = ${ids[0]!}`.execute(plain.db);
    const ageOf = (id: number) => stored[id] ?? 33;
    // The answer with the values written by SQL put back as the API wrote them.
    const asWritten = (body: unknown): unknown => {
      if (Array.isArray(body)) return body.map(asWritten);
      const user = { ...(body as { id: number; age?: number; status?: string }) };
      if (user.id in stored && user.age === stored[user.id]) user.age = written[ids.indexOf(user.id)];
      if (user.status === 'suspended') user.status = 'active';
      return user;
    };

    const byAge = [...ids].sort((a, b) => ageOf(a) - ageOf(b) || a - b);
    const cases: [string, number[]][] = [
      ['/users', ids],
      ['/users?sort=age', byAge],
      ['/users?sort=age:desc', [...byAge].reverse()],
      ['/users?older_than=150', ids.filter((id) => ageOf(id) > 150)],
      ['/users?younger_than=0&status=active', ids.filter((id) => ageOf(id) < 0)],
      ['/users?older_than=18&younger_than=300&sort=age:desc,id', [...byAge].reverse().filter((id) => ageOf(id) > 18 && ageOf(id) < 300)],
      ['/users?lives_in=brazil&sort=age&page=2&size=2', byAge.slice(2, 4)],
      ['/users?sort=age&after=&size=3', byAge.slice(0, 3)],
      ['/users?fields=id,age&sort=age', byAge],
      ['/users/young-brazilians', ids.filter((id) => ageOf(id) > 18 && ageOf(id) < 35)],
    ];
    for (const app of [indexed, plain]) {
      const read = client(app, ADMIN_TOKEN, { asWritten });
      for (const [url, expected] of cases) {
        const res = await read.get(url);
        expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
        const rows = res.json<{ id: number; age: number }[]>();
        expect(
          rows.map((u) => u.id),
          url,
        ).toEqual(expected);
        for (const u of rows) expect(u.age, url).toBe(ageOf(u.id));
      }
      const all = await read.get('/users?older_than=150');
      expect(all.headers['x-total-count']).toBe('3');
      for (const id of ids) {
        const one = await read.get(`/users/${id}`);
        expect(one.statusCode, one.body).toBe(200);
        expect(one.headers.etag).toMatch(/^"/);
        expect(one.json()).toMatchObject({ id, age: ageOf(id), status: id === ids[0] ? 'suspended' : 'active', email: `odd${ids.indexOf(id)}@example.com` });
        // The document is unchanged: it states what the API writes, which the stored values are not.
        if (id in stored) expect(answerProblems(app, 'GET', `/users/${id}`, one).join()).toMatch(/body does not match/);
      }
    }
    // The index answered its family (not SQL because it failed or fell behind).
    expect(indexed.usersIndex!.state).toBe('ready');
    // Same answers from both, headers included.
    for (const [url] of cases) {
      const [a, b] = await Promise.all([indexed, plain].map((app) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })));
      expect([a!.statusCode, a!.headers['x-total-count'], a!.headers.link, a!.body]).toEqual([
        b!.statusCode,
        b!.headers['x-total-count'],
        b!.headers.link,
        b!.body,
      ]);
    }
    // Still editable through the API: a PATCH of another field keeps the stored age; one of the age follows the rules.
    const patched = await client(plain, ADMIN_TOKEN, { asWritten }).patch(`/users/${ids[0]!}`, { status: 'inactive' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ id: ids[0], age: 200, status: 'inactive' });
    const refused = await api.patch(`/users/${ids[0]!}`, { age: 200 });
    expect(refused.statusCode).toBe(400);
  });
});
