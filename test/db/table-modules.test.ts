import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestContext } from '../helpers.js';
import { indexDefinitions } from '../../src/db/indexes.js';
import { usersListSource } from '../../src/modules/users/users.repository.js';

// A table module (src/modules/<x>/<x>.table.ts) states a table once for the running code; the
// migrations that made the table keep frozen copies of what they needed. These tests hold the two
// together on the migrated database itself, so a table module can never name what is not there.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestApp();
});
afterAll(async () => {
  await ctx.close();
});

describe('users.table.ts', () => {
  it('names only indexes the migrations made', async () => {
    const source = usersListSource(ctx.app.db);
    const named = new Set<string>([
      ...Object.values(source.orderIndexes).flatMap((pair) => pair.filter((i): i is string => i !== null)),
      ...source.filterIndexes.map((f) => f.index),
      ...source.pinnedIndexes.flatMap((p) => Object.values(p.orders).flat()),
    ]);
    const existing = new Set((await indexDefinitions(ctx.app.db, 'users')).map((i) => i.name));
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((name) => !existing.has(name))).toEqual([]);
  });
});
