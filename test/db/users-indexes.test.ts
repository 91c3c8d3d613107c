import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator, sql, type Kysely } from 'kysely';
import { backend, freshDatabase } from '../database.js';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { collationKey, fold } from '../../src/db/collation.js';
import { makeConfig } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';

// A user's status and age are what a PATCH changes most (issues 32 and 37). No index of users holds
// either (migration 20261127T0100), read from the database's own catalogue: so such an UPDATE writes
// no index entry on either backend, and on PostgreSQL it is a HOT update (the new row version on the
// same page, no index touched), which the table's fillfactor leaves room for even on a page the
// load filled.

const HELD = ['status', 'age'];

let ctx: TestContext;
let api: Client;
let db: Kysely<unknown>;

beforeAll(async () => {
  // One pooled connection on PostgreSQL: the PATCH's UPDATE and the statistics' flush and read below
  // all run in the same backend, so its counts are flushed when asked (pg_stat_force_next_flush).
  ctx = await buildTestApp({ pgPoolSize: 1 });
  api = client(ctx.app, ctx.tokens.admin);
  db = ctx.app.db as unknown as Kysely<unknown>;
  // 400 users in one statement: the first pages of users filled as a load fills them (to the fillfactor).
  const rows = Array.from({ length: 400 }, (_, n) => {
    const [first, last, country] = [`First${n % 37}`, `Last${n % 41}`, ['Brazil', 'Chile', 'Japan'][n % 3]!];
    const keys = [collationKey(first), collationKey(last), collationKey(country), fold(country)];
    return sql`(${first}, ${last}, ${`u${n}@example.com`}, ${20 + (n % 60)}, ${n % 3 === 0 ? 'inactive' : 'active'}, ${country}, ${sql.join(keys)})`;
  });
  await sql`insert into users (first_name, last_name, email, age, status, country, first_name_key, last_name_key, country_key, country_fold)
    values ${sql.join(rows)}`.execute(db);
});
afterAll(() => ctx?.close());

/** Every index of users (the primary key's and the email's too) with the columns it holds, keys and carried, and its definition. */
async function usersIndexes(db: Kysely<unknown>): Promise<{ name: string; columns: string[]; definition: string }[]> {
  if (backend === 'postgres') {
    const { rows } = await sql<{ name: string; columns: string[] | null; definition: string }>`
      select i.relname as name, pg_get_indexdef(x.indexrelid) as definition,
        array(select a.attname::text from pg_attribute a where a.attrelid = x.indrelid and a.attnum = any(x.indkey) order by a.attnum) as columns
      from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = 'users'::regclass order by 1`.execute(db);
    return rows.map((r) => ({ name: r.name, columns: r.columns ?? [], definition: r.definition }));
  }
  const { rows } = await sql<{ name: string; sql: string | null }>`
    select name, sql from sqlite_master where type = 'index' and tbl_name = 'users' order by name`.execute(db);
  const out: { name: string; columns: string[]; definition: string }[] = [];
  for (const { name, sql: definition } of rows) {
    // Keys and the carried columns (xinfo: the rowid too); an expression has no name (its text is in the definition).
    const { rows: columns } = await sql<{ name: string | null }>`select name from pragma_index_xinfo(${name})`.execute(db);
    out.push({ name, columns: columns.map((c) => c.name).filter((c): c is string => c !== null), definition: definition ?? '' });
  }
  return out;
}

/** The names of the indexes that hold status or age: as a column (key or carried), or in an expression. */
function holdingStatusOrAge(indexes: { name: string; columns: string[]; definition: string }[]): string[] {
  // The definition after its name and table (an index named users_status_... holds nothing by its name).
  const held = (i: { columns: string[]; definition: string }) =>
    i.columns.some((c) => HELD.includes(c)) || /\b(status|age)\b/i.test(i.definition.replace(/^.*? on \S+/i, ''));
  return indexes.filter(held).map((i) => i.name);
}

describe('the users indexes', () => {
  it('hold neither status nor age (key, carried column or expression), in the catalogue', async () => {
    const indexes = await usersIndexes(db);
    // The primary key's, the email's and the name, country and country-name indexes.
    expect(indexes.length).toBeGreaterThanOrEqual(10);
    // But on SQLite, which has no HOT update to keep, the one index the SQL path reads a country's
    // status and ages from (migration 20261127T0340): a PATCH of them writes its one entry.
    expect(holdingStatusOrAge(indexes)).toEqual(backend === 'postgres' ? [] : ['users_country_status_age']);
  });

  it.runIf(backend === 'postgres')("makes a PATCH of a user's status and age a HOT update (PostgreSQL), on a page the load filled", async () => {
    const { rows: options } = await sql<{ options: string[] | null }>`select reloptions as options from pg_class where oid = 'users'::regclass`.execute(db);
    expect(options[0]?.options).toContain('fillfactor=90');
    // The first user, on the first page of the table.
    const { rows: first } = await sql<{ id: number; ctid: string }>`select id, ctid::text as ctid from users order by id limit 1`.execute(db);
    expect(first[0]!.ctid).toMatch(/^\(0,/);
    const counts = async () => {
      // This backend's own counts flushed at its next idle moment, which comes before the next statement.
      await sql`select pg_stat_force_next_flush()`.execute(db);
      const { rows } = await sql<{ upd: string; hot: string }>`
        select n_tup_upd as upd, n_tup_hot_upd as hot from pg_stat_user_tables where relid = 'users'::regclass`.execute(db);
      return { upd: Number(rows[0]!.upd), hot: Number(rows[0]!.hot) };
    };
    const before = await counts();
    for (const [status, age] of [
      ['inactive', 44],
      ['active', 45],
    ] as const) {
      const res = await api.patch(`/users/${first[0]!.id}`, { status, age });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status, age });
    }
    const after = await counts();
    expect(after.upd - before.upd).toBe(2);
    expect(after.hot - before.hot).toBe(2);
    const { rows: moved } = await sql<{ ctid: string }>`select ctid::text as ctid from users where id = ${first[0]!.id}`.execute(db);
    expect(moved[0]!.ctid).toMatch(/^\(0,/);
  });
});

describe('migration 20261127T0100 down and up', () => {
  it('makes the indexes that held status and age again (and the table without its fillfactor), then takes them out again, rows kept', async () => {
    const database = await freshDatabase();
    const conn = connect(makeConfig({ databaseUrl: database.url }));
    const mdb = conn.db as unknown as Kysely<unknown>;
    try {
      await migrateToLatest(conn.db);
      const keys = [collationKey('Ana'), collationKey('Lima'), collationKey('Chile'), fold('Chile')];
      await sql`insert into users (first_name, last_name, email, age, status, country, first_name_key, last_name_key, country_key, country_fold)
        values ('Ana', 'Lima', 'ana@example.com', 33, 'active', 'Chile', ${sql.join(keys)})`.execute(mdb);
      const schema = backend === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(mdb)).rows[0]!.s : undefined;
      const migrator = new Migrator({ db: mdb, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
      const reloptions = async () =>
        backend === 'postgres'
          ? (await sql<{ o: string[] | null }>`select reloptions as o from pg_class where oid = 'users'::regclass`.execute(mdb)).rows[0]!.o
          : null;
      const down = await migrator.migrateTo('20261126T0400_ids_within_int4');
      expect(down.error).toBeUndefined();
      const before = await usersIndexes(mdb);
      expect(holdingStatusOrAge(before)).toEqual(
        expect.arrayContaining(['users_status_age_idx', 'users_age_asc', 'users_status_desc', 'users_first_name_asc', 'users_country_fold_asc']),
      );
      expect(holdingStatusOrAge(before)).toHaveLength(17);
      expect(await reloptions()).toBeNull();
      // Every migration after the one gone down to runs again (this one first), later ones included.
      const names = Object.keys(migrations);
      expect((await migrateToLatest(conn.db)).map((r) => [r.migrationName, r.status])).toEqual(
        names.slice(names.indexOf('20261126T0400_ids_within_int4') + 1).map((name) => [name, 'Success']),
      );
      expect(names.slice(names.indexOf('20261126T0400_ids_within_int4') + 1)[0]).toBe('20261127T0100_users_indexes_without_status_age');
      const after = await usersIndexes(mdb);
      expect(holdingStatusOrAge(after)).toEqual(backend === 'postgres' ? [] : ['users_country_status_age']);
      expect(after.map((i) => i.name)).toEqual(expect.arrayContaining(['users_first_name_asc', 'users_country_last_name_desc', 'users_country_fold_asc']));
      if (backend === 'postgres') expect(await reloptions()).toEqual(['fillfactor=90']);
      const { rows } = await sql<{ email: string; age: number }>`select email, age from users`.execute(mdb);
      expect(rows.map((r) => [r.email, Number(r.age)])).toEqual([['ana@example.com', 33]]);
    } finally {
      await conn.close();
      await database.drop();
    }
  });
});
