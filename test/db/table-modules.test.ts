import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestContext } from '../helpers.js';
import { indexDefinitions } from '../../src/db/indexes.js';
import { sql } from 'kysely';
import { isPostgres } from '../../src/db/dialect.js';
import { usersListSource } from '../../src/modules/users/users.repository.js';
import { ARTISTS } from '../../src/modules/artists/artists.table.js';
import { ALBUMS } from '../../src/modules/albums/albums.table.js';
import { SONGS } from '../../src/modules/songs/songs.table.js';
import { USERS } from '../../src/modules/users/users.table.js';
import { ALIASES } from '../../src/modules/aliases/aliases.table.js';
import { Artist } from '../../src/modules/artists/artists.schemas.js';
import { Album } from '../../src/modules/albums/albums.schemas.js';
import { Song } from '../../src/modules/songs/songs.schemas.js';
import { User } from '../../src/modules/users/users.schemas.js';
import { Alias } from '../../src/modules/aliases/aliases.schemas.js';

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

describe('each table module', () => {
  it.each([
    ['artists', ARTISTS.fields, Artist],
    ['albums', ALBUMS.fields, Album],
    ['songs', SONGS.fields, Song],
    ['users', USERS.fields, User],
    ['aliases', ALIASES.fields, Alias],
  ] as const)('%s: states the fields its representation schema has', (_table, fields, schema) => {
    expect([...fields].sort()).toEqual(Object.keys(schema.properties).sort());
  });

  it.each([ARTISTS, ALBUMS, SONGS, USERS, ALIASES].map((t) => [t.table, t] as const))('%s: has every column it states', async (table, def) => {
    const columns = new Set(await columnsOf(table));
    const stated = [...def.fields, ...def.names.map((n) => `${n}_key`), ...('parent' in def ? [def.parent] : [])];
    expect(stated.filter((c) => !columns.has(c))).toEqual([]);
  });
});

async function columnsOf(table: string): Promise<string[]> {
  if (isPostgres(ctx.app.db)) {
    const { rows } = await sql<{
      name: string;
    }>`select column_name as name from information_schema.columns where table_name = ${table} and table_schema = current_schema()`.execute(ctx.app.db);
    return rows.map((r) => r.name);
  }
  const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(ctx.app.db);
  return rows.map((r) => r.name);
}
