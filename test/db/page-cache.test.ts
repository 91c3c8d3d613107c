import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestContext } from '../helpers.js';
import { backend } from '../database.js';
import { SQLITE_CACHE_KIB } from '../../src/db/connect.js';

// Each SQLite connection's page cache is bounded by the service (src/db/connect.ts), not left at
// better-sqlite3's build default (16,000 KiB), which filled up as a worker's users index loaded and
// stayed: part of the 200 MB a worker of issue 37.

describe.skipIf(backend !== 'sqlite')("the SQLite connection's page cache (sqlite)", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestApp();
  });
  afterAll(() => ctx?.close());

  it('is SQLITE_CACHE_KIB, not the 16,000 KiB better-sqlite3 builds SQLite with', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(200);
    expect(ctx.app.connection.sqlite!.pragma('cache_size', { simple: true })).toBe(-SQLITE_CACHE_KIB);
    expect(SQLITE_CACHE_KIB).toBeLessThan(16_000);
  });
});
