import { describe, expect, it } from 'vitest';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import type { CollectionDef, FilterDef } from '../../src/query/collection.js';
import type { Condition } from '../../src/query/request.js';
import { applyToSelect, type ListPlan } from '../../src/query/sql.js';
import { shapeOf } from '../../src/query/shapes.js';
import { named } from '../../src/db/named-params.js';
import { usersCollection } from '../../src/modules/users/users.collection.js';
import { artistsCollection } from '../../src/modules/artists/artists.collection.js';
import { albumsCollection } from '../../src/modules/albums/albums.collection.js';
import { songsCollection } from '../../src/modules/songs/songs.collection.js';
import { aliasesCollection } from '../../src/modules/aliases/aliases.collection.js';
import { tokensCollection } from '../../src/modules/tokens/tokens.collection.js';

// A list's SQL is compiled once per shape (query/shapes.ts) and then run with each request's values,
// so two plans with one shape key must be one statement: the same SQL text binding the same names.
// Checked over every filter every collection declares, each also with every flag of a declaration
// turned the other way (a filter a developer could declare), with one to three values, on both
// backends' SQL, and with every sort. Nothing from an HTTP request: this is about what the key reads.

const COLLECTIONS: CollectionDef[] = [usersCollection, artistsCollection, albumsCollection, songsCollection, aliasesCollection, tokensCollection];

const compilers = {
  sqlite: new Kysely<unknown>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
  postgres: new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
};

/** Every declared filter, and each compared every way text can be (as stored, exact, folded, keys with and without the probe), and with list flipped. */
function declarations(): FilterDef[] {
  const out: FilterDef[] = [];
  for (const collection of COLLECTIONS) {
    for (const def of Object.values(collection.filters)) {
      out.push(def, { ...def, list: !def.list });
      for (const text of [undefined, 'exact', 'fold', 'key', 'binary'] as const) out.push({ ...def, text }, { ...def, text, probe: true });
    }
  }
  return out;
}

function plans(): ListPlan[] {
  const out: ListPlan[] = [];
  for (const def of declarations()) {
    for (const count of def.op === 'eq' ? [1, 2, 3] : [1]) {
      for (const postgres of [false, true]) {
        const value = def.type === 'integer' ? 7 : def.op === 'match' ? 'word' : 'Value';
        const condition: Condition = { param: 'p', def, values: Array.from({ length: count }, () => value), postgres };
        for (const collection of COLLECTIONS) {
          const sortDefs = Object.entries(collection.sortable).flatMap(([field, d]) => [[field, d] as const, [field, { ...d, key: !d.key }] as const]);
          for (const [field, sortDef] of [['', undefined] as const, ...sortDefs]) {
            const sort = sortDef ? [{ field, direction: 'desc' as const, def: sortDef }] : [];
            out.push({
              filters: [condition],
              request: { collection: collection.name, filters: [condition], sort, page: { style: 'size', offset: 0, limit: 20 }, kept: [] },
            });
          }
        }
      }
    }
  }
  return out;
}

describe('list shape keys', () => {
  it('are one key only for one statement: the same SQL binding the same names, on both backends', () => {
    const all = plans();
    expect(all.length).toBeGreaterThan(1000);
    for (const [backend, db] of Object.entries(compilers)) {
      const byKey = new Map<string, { sql: string; names: string[]; plan: ListPlan }>();
      for (const plan of all) {
        const compiled = named(applyToSelect(db.selectFrom(sql`t`.as('t') as never).selectAll() as never, plan).compile(), 'shape');
        const key = shapeOf(plan);
        const seen = byKey.get(key);
        if (!seen) {
          byKey.set(key, { ...compiled, plan });
          continue;
        }
        const label = `${backend}: ${key}\n  ${JSON.stringify(seen.plan.filters[0]!.def)}\n  ${JSON.stringify(plan.filters[0]!.def)}`;
        expect([label, compiled.sql, compiled.names]).toEqual([label, seen.sql, seen.names]);
      }
      // Different statements, different keys: the check above compared something.
      expect(byKey.size).toBeGreaterThan(100);
    }
  });
});
