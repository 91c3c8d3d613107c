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
});
