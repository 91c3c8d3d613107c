import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestApp();
});
afterAll(() => ctx.close());

describe('GET /users/{id} once the OpenAPI document is built', () => {
  it('documents {id} as text and still checks digits as a user id and anything else as an alias name', async () => {
    const api = client(ctx.app, ctx.tokens.admin);
    const doc = (await api.get('/openapi.json')).json<{ paths: Record<string, { get: { parameters: { in: string; schema: object }[] } }> }>();
    const id = doc.paths['/users/{id}']!.get.parameters.find((p) => p.in === 'path');
    expect(id?.schema).toEqual({ type: 'string', maxLength: 64 });
    expect(errorBody(await api.get('/users/0')).details).toEqual([{ field: 'id', minimum: 'Must be at least 1.' }]);
    expect(errorBody(await api.get('/users/12abc')).details).toEqual([
      { field: 'id', invalid: 'Must be a user id (integer) or an alias name (lower-case words joined by hyphens).' },
    ]);
    expect((await api.get('/users/42')).statusCode).toBe(404);
  });

  it('says on every list parameter that it is for an alias only, and a numeric id refuses each with 400 naming it', async () => {
    const api = client(ctx.app, ctx.tokens.admin);
    const created = await api.post('/users', { first_name: 'Ana', last_name: 'Lima', email: 'ana@example.com', age: 30, status: 'active', country: 'Brazil' });
    const { id } = created.json<{ id: number }>();
    const doc = (await api.get('/openapi.json')).json<{
      paths: Record<string, { get: { parameters: { in: string; name: string; description?: string }[] } }>;
    }>();
    const query = doc.paths['/users/{id}']!.get.parameters.filter((p) => p.in === 'query');
    expect(query.length).toBeGreaterThan(10);
    // fields applies to one user as to a list (a sparse fieldset); every other parameter is a list's.
    for (const p of query.filter((q) => q.name !== 'fields'))
      expect([p.name, p.description]).toEqual([p.name, expect.stringContaining('Only when {id} is an alias: with a user id, any query parameter is 400.')]);
    const values: Record<string, string> = {
      status: 'active',
      older_than: '18',
      lives_in: 'brazil',
      first_name: 'Ana',
      sort: 'id:asc',
      sort_by: 'age',
      page: '1',
      size: '10',
      after: '',
    };
    for (const [name, value] of Object.entries(values)) {
      const res = await api.get(`/users/${id}?${name}=${value}`);
      expect([name, res.statusCode]).toEqual([name, 400]);
      expect(errorBody(res).details?.map((d) => d.field)).toContain(name);
    }
    expect((await api.get(`/users/${id}`)).statusCode).toBe(200);
    expect((await api.get(`/users/${id}?fields=id`)).json()).toEqual({ id });
  });
});
