import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;
let n = 0;

const user = (over: Record<string, unknown> = {}) => ({
  first_name: 'Ana',
  last_name: 'Silva',
  email: `ana${++n}@example.com`,
  age: 30,
  status: 'active',
  country: 'Brazil',
  ...over,
});

async function createUser(over: Record<string, unknown> = {}) {
  const res = await api.post('/users', user(over));
  if (res.statusCode !== 201) throw new Error(`createUser: ${res.statusCode} ${res.body}`);
  return res.json<{ id: number; email: string } & Record<string, unknown>>();
}

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
});
afterAll(() => ctx.close());

describe('POST /users', () => {
  it('creates a user: 201, Location, every field', async () => {
    const body = user({ first_name: '  Bia ', country: ' Chile ' });
    const res = await api.post('/users', body);
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({ ...body, id: expect.any(Number), first_name: 'Bia', country: 'Chile' });
    expect(res.headers.location).toBe(`/users/${created.id}`);
  });

  it('answers 409 CONFLICT for a duplicate email, in any case', async () => {
    const first = await createUser();
    const res = await api.post('/users', user({ email: first.email.toUpperCase() }));
    expect(res.statusCode).toBe(409);
    expect(errorBody(res)).toEqual({ code: 'CONFLICT', message: 'A user with this email already exists.' });
  });

  it('lists every missing field', async () => {
    const res = await api.post('/users', {});
    expect(res.statusCode).toBe(400);
    const fields = errorBody(res)
      .details!.map((d) => d.field)
      .sort();
    expect(fields).toEqual(['age', 'country', 'email', 'first_name', 'last_name', 'status']);
  });

  it.each([
    ['a bad email', { email: 'not-an-email' }, { field: 'email', format: 'Must be a valid email.' }],
    ['age below 0', { age: -1 }, { field: 'age', minimum: 'Must be at least 0.' }],
    ['age above 150', { age: 151 }, { field: 'age', maximum: 'Must be at most 150.' }],
    ['age as text', { age: '30' }, { field: 'age', type: 'Must be integer.' }],
    ['an unknown status', { status: 'banned' }, { field: 'status', enum: 'Must be one of: active, inactive.' }],
    ['a name over 100', { first_name: 'x'.repeat(101) }, { field: 'first_name', maxLength: 'Must be at most 100 characters.' }],
    ['a blank last name', { last_name: '  ' }, { field: 'last_name', pattern: 'Must not be blank.' }],
    ['a country over 64', { country: 'x'.repeat(65) }, { field: 'country', maxLength: 'Must be at most 64 characters.' }],
    ['an unknown field', { nickname: 'a' }, { field: 'nickname', unknown: 'Unknown field.' }],
  ])('rejects %s', async (_label, change, detail) => {
    const res = await api.post('/users', user(change));
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('counts the length of names and country as sent (as the document says), and stores them trimmed', async () => {
    const res = await api.post('/users', user({ first_name: ` ${'f'.repeat(98)} `, last_name: `${'l'.repeat(98)}  `, country: ` ${'c'.repeat(63)}` }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expect.objectContaining({ first_name: 'f'.repeat(98), last_name: 'l'.repeat(98), country: 'c'.repeat(63) }));
    const over = await api.post('/users', user({ first_name: ` ${'f'.repeat(100)}` }));
    expect(errorBody(over).details).toEqual([{ field: 'first_name', maxLength: 'Must be at most 100 characters.' }]);
  });

  it('needs the admin scope', async () => {
    const res = await client(ctx.app, ctx.tokens.write).post('/users', user());
    expect(res.statusCode).toBe(403);
    expect(errorBody(res).code).toBe('FORBIDDEN');
  });
});

describe('GET /users/{id}', () => {
  it('returns the user', async () => {
    const created = await createUser({ first_name: 'Caio' });
    const res = await api.get(`/users/${created.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);
  });

  it('answers 404 "User not found." for an unknown id', async () => {
    const res = await api.get('/users/999999');
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'User not found.' });
  });

  it.each([
    ['0', { field: 'id', minimum: 'Must be at least 1.' }],
    ['99999999999', { field: 'id', maximum: 'Must be at most 2147483647.' }],
    ['12abc', { field: 'id', invalid: 'Must be a user id (integer) or an alias name (lower-case words joined by hyphens).' }],
    ['Young-Brazilians', { field: 'id', invalid: 'Must be a user id (integer) or an alias name (lower-case words joined by hyphens).' }],
    ['1'.repeat(65), { field: 'id', maxLength: 'Must be at most 64 characters.' }],
    ['x'.repeat(65), { field: 'id', maxLength: 'Must be at most 64 characters.' }],
  ])('rejects the segment %s with 400', async (segment, detail) => {
    const res = await api.get(`/users/${segment}`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('rejects query parameters on a single user', async () => {
    const created = await createUser();
    const res = await api.get(`/users/${created.id}?status=active`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'status', unknown: 'Unknown query parameter.' }]);
  });

  it('sends the version ETag of the user and answers 304 without a body to a matching If-None-Match', async () => {
    const created = await createUser();
    const first = await api.get(`/users/${created.id}`);
    expect(first.headers.etag).toBe(`"user-${created.id}-v1"`);
    const again = await api.get(`/users/${created.id}`, { 'if-none-match': first.headers.etag as string });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    await api.patch(`/users/${created.id}`, { age: 31 });
    const changed = await api.get(`/users/${created.id}`, { 'if-none-match': first.headers.etag as string });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).toBe(`"user-${created.id}-v2"`);
    expect(changed.json()).toEqual({ ...created, age: 31 });
  });

  it('needs the admin scope, even to read', async () => {
    const created = await createUser();
    expect((await client(ctx.app, ctx.tokens.read).get(`/users/${created.id}`)).statusCode).toBe(403);
    expect((await client(ctx.app).get(`/users/${created.id}`)).statusCode).toBe(401);
  });
});

describe('PATCH /users/{id}', () => {
  it('changes only the fields sent', async () => {
    const created = await createUser({ age: 20 });
    const res = await api.patch(`/users/${created.id}`, { age: 21, country: ' Peru ' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...created, age: 21, country: 'Peru' });
    expect((await api.get(`/users/${created.id}`)).json()).toEqual({ ...created, age: 21, country: 'Peru' });
  });

  it('validates the fields sent as on create and changes nothing when one fails', async () => {
    const created = await createUser();
    const res = await api.patch(`/users/${created.id}`, { age: 200, status: 'gone', id: 5 });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual(
      expect.arrayContaining([
        { field: 'age', maximum: 'Must be at most 150.' },
        { field: 'status', enum: 'Must be one of: active, inactive.' },
        { field: 'id', unknown: 'Unknown field.' },
      ]),
    );
    expect((await api.get(`/users/${created.id}`)).json()).toEqual(created);
  });

  it('rejects an empty body', async () => {
    const created = await createUser();
    const res = await api.patch(`/users/${created.id}`, {});
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'body', required: 'At least one field must be sent.' }]);
  });

  it("answers 409 when taking another user's email", async () => {
    const a = await createUser();
    const b = await createUser();
    const res = await api.patch(`/users/${b.id}`, { email: a.email });
    expect(res.statusCode).toBe(409);
    expect(errorBody(res)).toEqual({ code: 'CONFLICT', message: 'A user with this email already exists.' });
    expect((await api.get(`/users/${b.id}`)).json().email).toBe(b.email);
  });

  it('answers 404 for an unknown user, even with If-Match', async () => {
    const variants: Record<string, string>[] = [{}, { 'if-match': '*' }, { 'if-match': '"user-999999-v1"' }];
    for (const headers of variants) {
      const res = await api.patch('/users/999999', { age: 3 }, headers);
      expect(res.statusCode).toBe(404);
      expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'User not found.' });
    }
  });

  it('answers the new ETag, the one a GET then sends', async () => {
    const created = await createUser();
    const res = await api.patch(`/users/${created.id}`, { age: 40 });
    expect(res.headers.etag).toBe(`"user-${created.id}-v2"`);
    expect((await api.get(`/users/${created.id}`)).headers.etag).toBe(res.headers.etag);
  });

  it('applies If-Match with the current ETag and refuses a stale one with 412, changing nothing', async () => {
    const created = await createUser({ age: 50 });
    const etag = (await api.get(`/users/${created.id}`)).headers.etag as string;
    const ok = await api.patch(`/users/${created.id}`, { age: 51 }, { 'if-match': etag });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ ...created, age: 51 });
    expect(ok.headers.etag).not.toBe(etag);
    const stale = await api.patch(`/users/${created.id}`, { age: 99, status: 'inactive' }, { 'if-match': etag });
    expect(stale.statusCode).toBe(412);
    expect(errorBody(stale)).toEqual({
      code: 'PRECONDITION_FAILED',
      message: 'The resource has changed: If-Match does not match its current ETag. Fetch it again.',
    });
    const now = await api.get(`/users/${created.id}`);
    expect(now.json()).toEqual({ ...created, age: 51 });
    expect(now.headers.etag).toBe(ok.headers.etag);
  });

  it('accepts If-Match: * and a list holding the current ETag; a weak tag or another kind never matches', async () => {
    const created = await createUser();
    expect((await api.patch(`/users/${created.id}`, { age: 1 }, { 'if-match': '*' })).statusCode).toBe(200);
    const etag = (await api.get(`/users/${created.id}`)).headers.etag as string;
    expect((await api.patch(`/users/${created.id}`, { age: 2 }, { 'if-match': `W/${etag}` })).statusCode).toBe(412);
    expect((await api.patch(`/users/${created.id}`, { age: 2 }, { 'if-match': etag.replace('user', 'artist') })).statusCode).toBe(412);
    expect((await api.patch(`/users/${created.id}`, { age: 3 }, { 'if-match': `"nope", ${etag}` })).statusCode).toBe(200);
    expect((await api.get(`/users/${created.id}`)).json().age).toBe(3);
  });
});

describe('DELETE /users/{id}', () => {
  it('deletes: 204, then 404', async () => {
    const created = await createUser();
    const res = await api.delete(`/users/${created.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await api.get(`/users/${created.id}`)).statusCode).toBe(404);
    expect((await api.delete(`/users/${created.id}`)).statusCode).toBe(404);
  });

  it('refuses a stale If-Match with 412 and deletes nothing; the current one deletes', async () => {
    const created = await createUser();
    const etag = (await api.get(`/users/${created.id}`)).headers.etag as string;
    await api.patch(`/users/${created.id}`, { age: 44 });
    const stale = await api.delete(`/users/${created.id}`, { 'if-match': etag });
    expect(stale.statusCode).toBe(412);
    expect(errorBody(stale).code).toBe('PRECONDITION_FAILED');
    expect((await api.get(`/users/${created.id}`)).json()).toEqual({ ...created, age: 44 });
    const current = (await api.get(`/users/${created.id}`)).headers.etag as string;
    expect((await api.delete(`/users/${created.id}`, { 'if-match': current })).statusCode).toBe(204);
    expect((await api.get(`/users/${created.id}`)).statusCode).toBe(404);
  });

  it('deletes with If-Match: *, and answers 404 for an unknown user whatever the If-Match', async () => {
    const created = await createUser();
    expect((await api.delete(`/users/${created.id}`, { 'if-match': '*' })).statusCode).toBe(204);
    for (const headers of [{ 'if-match': '*' }, { 'if-match': `"user-${created.id}-v1"` }]) {
      const res = await api.delete(`/users/${created.id}`, headers);
      expect(res.statusCode).toBe(404);
      expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'User not found.' });
    }
  });

  it('rejects a non-integer id', async () => {
    const res = await api.delete('/users/young-brazilians');
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'id', type: 'Must be integer.' }]);
  });
});
