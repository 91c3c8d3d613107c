import { describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import Database from 'better-sqlite3';
import { lastHeldFared, lastHeldTrusted, sqliteHeld, totalsOf, valuesOf } from '../../src/query/held-summary.js';
import type { Condition } from '../../src/query/request.js';

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

// A total (and the per-value counts a page strategy weighs) is summed from the summary held in
// memory, over the combinations of values the filters select. The oracle is SQL over the same
// summary table: the same filters as WHERE, summed (or grouped) by SQLite.
describe('totalsOf and valuesOf on a held summary', () => {
  const summary = { table: 'users_counts', columns: ['status', 'country', 'age'] };
  const statuses = ['active', 'inactive'];
  const countries = ['brazil', 'chile', 'japan', 'spain', 'united states'];
  const cond = (column: string, op: 'eq' | 'gt' | 'lt', type: 'string' | 'integer', values: (string | number)[], caseInsensitive = false): Condition => ({
    param: column,
    def: { column, op, type, caseInsensitive, description: '' },
    values,
  });
  const where = (filters: Condition[]) =>
    filters.length === 0
      ? ['1 = 1', []]
      : [
          filters
            .map((c) =>
              c.def.op === 'gt'
                ? `${c.def.column} > ?`
                : c.def.op === 'lt'
                  ? `${c.def.column} < ?`
                  : `${c.def.caseInsensitive ? `lower(${c.def.column})` : c.def.column} in (${c.values.map(() => '?').join(', ')})`,
            )
            .join(' and '),
          filters.flatMap((c) => (c.def.caseInsensitive ? c.values.map((v) => String(v).toLowerCase()) : c.values)),
        ];

  function randomFilters(random: () => number): Condition[] {
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
    const filters: Condition[] = [];
    if (random() < 0.5) filters.push(cond('status', 'eq', 'string', [pick(statuses)]));
    if (random() < 0.4) filters.push(cond('age', 'gt', 'integer', [Math.floor(random() * 100) - 5]));
    if (random() < 0.4) filters.push(cond('age', 'lt', 'integer', [Math.floor(random() * 100)]));
    if (random() < 0.5)
      filters.push(cond('country', 'eq', 'string', [pick(countries).toUpperCase(), pick(countries), 'atlantis'].slice(0, 1 + Math.floor(random() * 3)), true));
    return filters;
  }

  it('equal what SQL sums over the summary table, for random filters, and follow the counts when the version moves', () => {
    const handle = new Database(':memory:');
    handle.exec(`create table table_versions (name text primary key, version integer not null);
      insert into table_versions values ('users', 1);
      create table users_counts (status text not null, country text not null, age integer not null, n integer not null, primary key (status, country, age))`);
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const insert = handle.prepare('insert or replace into users_counts values (?, ?, ?, ?)');
    for (let i = 0; i < 400; i++) insert.run(statuses[i % 2], countries[Math.floor(random() * 5)], Math.floor(random() * 90), 1 + Math.floor(random() * 50));

    for (let round = 0; round < 3; round++) {
      const held = sqliteHeld(handle, summary, 'users');
      for (let i = 0; i < 200; i++) {
        const filters = randomFilters(random);
        const [clause, values] = where(filters) as [string, unknown[]];
        const sum = handle.prepare(`select coalesce(sum(n), 0) as total from users_counts where ${clause}`).get(...values) as { total: number };
        const all = handle.prepare('select sum(n) as n from users_counts').get() as { n: number };
        expect(totalsOf(held, summary, filters)).toEqual({ total: sum.total, allRows: all.n });
        for (const column of summary.columns) {
          const direction = random() < 0.5 ? 'asc' : 'desc';
          const grouped = handle
            .prepare(
              `select ${column} as value, sum(n) as n from users_counts where ${clause} group by ${column} having sum(n) > 0 order by ${column} ${direction}`,
            )
            .all(...values);
          expect(valuesOf(held, summary, column, direction, filters)).toEqual(grouped);
        }
      }
      // A write: counts move (in place and in new rows) with the version, as the triggers do it.
      handle.exec(`update users_counts set n = n + 3 where age % 7 = ${round};
        insert or ignore into users_counts values ('inactive', 'brazil', 95, 11);
        update table_versions set version = version + 1`);
    }
    handle.close();
  });
});
