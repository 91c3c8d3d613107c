import { describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { lastHeldFared, lastHeldTrusted } from '../../src/query/held-summary.js';

// PostgreSQL reads some pages as of the summary its pool last held and keeps them only when their
// statements read the rows at that summary's version (query/statements.ts). Whether to try: while
// that has mostly paid off lately, and now and then when it has not, to notice that writes stopped.

describe('lastHeldTrusted', () => {
  it('is trusted until reads as of it are mostly wasted, then asked every 16th time, and trusted again after reads that pay off', () => {
    const pool = {} as Kysely<unknown>;
    expect(lastHeldTrusted(pool)).toBe(true);
    lastHeldFared(pool, true);
    lastHeldFared(pool, false); // 1 - 3 < 0
    const asks = Array.from({ length: 32 }, () => lastHeldTrusted(pool));
    expect(asks.filter(Boolean)).toHaveLength(2);
    lastHeldFared(pool, true);
    expect(lastHeldTrusted(pool)).toBe(false); // -1
    lastHeldFared(pool, true);
    expect(lastHeldTrusted(pool)).toBe(true); // 0
    // Per pool: another pool's reads tell nothing about this one.
    const other = {} as Kysely<unknown>;
    for (let i = 0; i < 10; i++) lastHeldFared(other, false);
    expect(lastHeldTrusted(pool)).toBe(true);
  });

  it('does not fall further than four misses from trusted: a long run of writes is forgotten after a few good reads', () => {
    const pool = {} as Kysely<unknown>;
    for (let i = 0; i < 100; i++) lastHeldFared(pool, false);
    for (let i = 0; i < 11; i++) lastHeldFared(pool, true);
    expect(lastHeldTrusted(pool)).toBe(false);
    lastHeldFared(pool, true);
    expect(lastHeldTrusted(pool)).toBe(true);
  });
});
