import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { makeConfig } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import { migrations } from '../../src/db/migrations/index.js';
import { collationKey, fold } from '../../src/db/collation.js';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { freshDatabase, type TestDatabase } from '../database.js';

// PostgreSQL (migration 20261127T1000): the users summaries' UPDATE triggers are row triggers with a
// WHEN on the counted columns. An UPDATE that moves no counted column does not call their function
// (what a PATCH of a status and an age costs: no name-count work); the totals stay exact for every
// mix of PATCHes, batched ones included; `down` gives back the statement triggers and the SQL
// events_pending_rows() of the migrations before, and the counts stay exact through down and up.

const NAME = '20261127T1000_cheaper_writes';
const ALL = Object.keys(migrations);
const BEFORE = ALL[ALL.indexOf(NAME) - 1]!;

/** users_counts and users_name_counts (folded rows and delta summed), zeros left out. */
async function summaries(db: Kysely<unknown>) {
  const { rows: c } = await sql<{ k: string; n: string }>`
    select concat_ws('|', status, country_fold, country_key, age) as k, sum(n) as n from users_counts group by 1 having sum(n) <> 0 order by 1`.execute(db);
  const { rows: m } = await sql<{ k: string; n: string }>`
    select field || '|' || name as k, sum(n) as n from users_name_counts group by 1 having sum(n) <> 0 order by 1`.execute(db);
  return { counts: Object.fromEntries(c.map((r) => [r.k, Number(r.n)])), names: Object.fromEntries(m.map((r) => [r.k, Number(r.n)])) };
}

/** The same, counted from the users themselves. */
async function counted(db: Kysely<unknown>) {
  const { rows: c } = await sql<{ k: string; n: string }>`
    select concat_ws('|', status, country_fold, country_key, age) as k, count(*) as n from users group by 1 order by 1`.execute(db);
  const { rows: m } = await sql<{ k: string; n: string }>`
    select k, n from (select 'first_name|' || first_name_key as k, count(*) as n from users group by 1
    union all select 'last_name|' || last_name_key, count(*) from users group by 1) as t order by 1`.execute(db);
  return { counts: Object.fromEntries(c.map((r) => [r.k, Number(r.n)])), names: Object.fromEntries(m.map((r) => [r.k, Number(r.n)])) };
}

describe('users summaries on PostgreSQL: UPDATE triggers that fire only when a counted column changes', () => {
  let ctx: TestContext;
  let api: Client;
  let db: Kysely<unknown>;
  let n = 0;
  const createUser = async (over: Record<string, unknown> = {}) => {
    const body = { first_name: 'Ana', last_name: 'Silva', email: `when${++n}@example.com`, age: 30, status: 'active', country: 'Brazil', ...over };
    const res = await api.post('/users', body);
    expect(res.statusCode).toBe(201);
    return res.json<{ id: number }>().id;
  };

  beforeAll(async () => {
    ctx = await buildTestApp();
    api = client(ctx.app, ctx.tokens.admin);
    db = ctx.app.db as unknown as Kysely<unknown>;
  });
  afterAll(() => ctx.close());

  /** How many times, in one transaction, an UPDATE of `set` called the functions of each summary. */
  async function callsOf(set: string, id: number, values: unknown[] = []): Promise<{ counts: number; names: number }> {
    const session = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await session.connect();
    try {
      await session.query('begin');
      await session.query(`set local track_functions = 'pl'`);
      await session.query(`update users set ${set}, version = version + 1 where id = $1`, [id, ...values]);
      const { rows } = await session.query<{ counts: string; names: string }>(`
        select coalesce(sum(pg_stat_get_xact_function_calls(p.oid)) filter (where proname like 'users\\_counts\\_%'), 0) as counts,
               coalesce(sum(pg_stat_get_xact_function_calls(p.oid)) filter (where proname like 'users\\_name\\_counts\\_%'), 0) as names
        from pg_proc p where p.pronamespace = current_schema()::regnamespace`);
      return { counts: Number(rows[0]!.counts), names: Number(rows[0]!.names) };
    } finally {
      await session.query('rollback');
      await session.end();
    }
  }

  it('an UPDATE that moves no counted column calls no summary function; one that does calls only its own', async () => {
    const id = await createUser();
    // What a PATCH of a status and an age writes: users_counts' function only, none for the names.
    expect(await callsOf(`status = 'inactive', age = 41`, id)).toEqual({ counts: 1, names: 0 });
    // An email: neither.
    expect(await callsOf(`email = 'moved-${id}@example.com'`, id)).toEqual({ counts: 0, names: 0 });
    // The same status and age written again: neither.
    expect(await callsOf(`status = 'active', age = 30`, id)).toEqual({ counts: 0, names: 0 });
    // A first name (its collation key moves): the name counts' function only.
    expect(await callsOf(`first_name = 'Bea', first_name_key = $2`, id, [collationKey('Bea')])).toEqual({ counts: 0, names: 1 });
  });

  it('keeps the totals exact through PATCHes of every kind, concurrent (batched) ones included', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 12; i++)
      ids.push(await createUser({ first_name: `Name${i % 3}`, last_name: `Last${i % 2}`, age: 20 + (i % 4), country: i % 2 ? 'Peru' : 'Chile' }));
    const bodies: Record<string, unknown>[] = [
      { first_name: 'Zoe' },
      { last_name: 'Other' },
      { first_name: 'Name0', last_name: 'Last0' }, // possibly its own names again
      { status: 'inactive', age: 77 },
      { country: 'PERU' }, // the same fold, another collation key
      { email: 'only-email@example.com' },
      { age: 20 },
      { first_name: 'ZOE', status: 'inactive' },
    ];
    // Concurrent PATCHes of distinct users (one UPDATE for those that set the same fields), twice over.
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(
        ids.map((id, i) => {
          const body = { ...bodies[(i + round) % bodies.length]! };
          if (body.email) body.email = `r${round}-${id}@example.com`;
          return api.patch(`/users/${id}`, body);
        }),
      );
      for (const res of answers) expect(res.statusCode).toBe(200);
      expect(await summaries(db)).toEqual(await counted(db));
    }
    // Two PATCHes of one user at once, then a delete: still exact.
    const both = await Promise.all([api.patch(`/users/${ids[0]}`, { first_name: 'Ida', age: 50 }), api.patch(`/users/${ids[0]}`, { first_name: 'Ivo' })]);
    for (const res of both) expect(res.statusCode).toBe(200);
    expect((await api.delete(`/users/${ids[1]}`)).statusCode).toBe(204);
    expect(await summaries(db)).toEqual(await counted(db));
  });
});

describe(`migration ${NAME} on PostgreSQL`, () => {
  const dropped: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dropped.splice(0)) await d.drop();
  });

  /** The users table's triggers and the functions they and the catch-up call, as the catalogue holds them. */
  async function shape(db: Kysely<unknown>) {
    const { rows: triggers } = await sql<{ def: string }>`
      select pg_get_triggerdef(t.oid) as def from pg_trigger t where t.tgrelid = 'users'::regclass and not t.tgisinternal order by t.tgname`.execute(db);
    const { rows: functions } = await sql<{ proname: string; lang: string; src: string; config: string[] | null }>`
      select p.proname, l.lanname as lang, p.prosrc as src, p.proconfig as config from pg_proc p join pg_language l on l.oid = p.prolang
      where p.pronamespace = current_schema()::regnamespace and (p.proname like 'users\\_%counts\\_%' or p.proname like 'events\\_%')
      order by p.proname`.execute(db);
    const { rows: columns } = await sql<{ name: string }>`
      select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'events_counter' order by 1`.execute(
      db,
    );
    return { triggers: triggers.map((t) => t.def.replace(/ ON \w+\.users /, ' ON users ')), functions, counter: columns.map((c) => c.name) };
  }

  it('goes down and up again: the triggers and functions of the migration before come back, the counts stay exact', async () => {
    const reference = await freshDatabase('postgres');
    dropped.push(reference);
    const database = await freshDatabase('postgres');
    dropped.push(database);
    const conns = [reference, database].map((d) => connect(makeConfig({ databaseUrl: d.url })));
    try {
      const [ref, db] = conns.map((c) => c.db as unknown as Kysely<unknown>) as [Kysely<unknown>, Kysely<unknown>];
      const migrator = (k: Kysely<unknown>, d: TestDatabase) =>
        new Migrator({ db: k, provider: { getMigrations: async () => migrations }, migrationTableSchema: d.schema });
      expect((await migrator(ref, reference).migrateTo(BEFORE)).error).toBeUndefined();
      expect((await migrator(db, database).migrateTo(NAME)).error).toBeUndefined();

      let written = 0;
      const addUser = (first: string) =>
        sql`insert into users (first_name, last_name, email, age, status, country, first_name_key, last_name_key, country_key, country_fold)
          values (${first}, 'Last', ${`m${++written}@example.com`}, 30, 'active', 'Peru', ${collationKey(first)}, ${collationKey('Last')},
            ${collationKey('Peru')}, ${fold('Peru')})`.execute(db);
      await addUser('Amy');
      await addUser('Bob');
      await sql`update users set first_name = 'Cy', first_name_key = ${collationKey('Cy')}, age = 31 where first_name = 'Amy'`.execute(db);
      expect(await summaries(db)).toEqual(await counted(db));

      const down = await migrator(db, database).migrateDown();
      expect(down.error).toBeUndefined();
      expect(down.results).toEqual([{ migrationName: NAME, direction: 'Down', status: 'Success' }]);
      expect(await shape(db)).toEqual(await shape(ref));
      await sql`update users set first_name = 'Dee', first_name_key = ${collationKey('Dee')}, status = 'inactive' where first_name = 'Bob'`.execute(db);
      await sql`update users set email = 'other@example.com' where first_name = 'Cy'`.execute(db);
      expect(await summaries(db)).toEqual(await counted(db));
      expect(await sql`select * from events_pending_rows()`.execute(db)).toBeDefined();

      const up = await migrator(db, database).migrateUp();
      expect(up.error).toBeUndefined();
      expect(up.results).toEqual([{ migrationName: NAME, direction: 'Up', status: 'Success' }]);
      await sql`update users set last_name = 'Next', last_name_key = ${collationKey('Next')}, age = 40`.execute(db);
      await addUser('Eve');
      expect(await summaries(db)).toEqual(await counted(db));
      // The catch-up's pending rows: every user event written and not published, as before.
      const pending = await sql<{ type: string }>`select type from events_pending_rows() where type like 'user.%' order by stmt, ord`.execute(db);
      const raw = await sql<{ type: string }>`select type from events_pending where type like 'user.%' order by stmt, ord`.execute(db);
      expect(pending.rows).toEqual(raw.rows);
      expect(pending.rows.length).toBeGreaterThan(0);
    } finally {
      for (const c of conns) await c.close();
    }
  });
});

describe('events_settle() on PostgreSQL (the background pass of each process)', () => {
  let database: TestDatabase;
  let conn: ReturnType<typeof connect>;
  let db: Kysely<unknown>;
  beforeAll(async () => {
    database = await freshDatabase('postgres');
    conn = connect(makeConfig({ databaseUrl: database.url }));
    db = conn.db as unknown as Kysely<unknown>;
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations }, migrationTableSchema: database.schema }).migrateToLatest();
    expect(error).toBeUndefined();
  });
  afterAll(async () => {
    await conn.close();
    await database.drop();
  });

  let artists = 0;
  const writeArtist = () =>
    sql`insert into artists (name, name_key, image) values (${`Settle ${++artists}`}, ${collationKey(`Settle ${artists}`)}, 'https://img.example.com/s.jpg')`.execute(
      db,
    );
  const head = async (call: string) => Number((await sql<{ head: string }>`select ${sql.raw(call)} as head`.execute(db)).rows[0]!.head);
  const pending = async () => Number((await sql<{ n: string }>`select count(*) as n from events_pending`.execute(db)).rows[0]!.n);

  it('publishes nothing less than the gap after another pass moved events; readers and later passes publish', async () => {
    await writeArtist();
    // No pass yet: it publishes, and records when.
    expect(await head('events_settle(3600000)')).toBe(1);
    await writeArtist();
    // Another pass within the gap: nothing moved, the head as it was.
    expect(await head('events_settle(3600000)')).toBe(1);
    expect(await pending()).toBe(1);
    // A reader's publish never skips.
    expect(await head('events_publish()')).toBe(2);
    await writeArtist();
    // Past the gap: published.
    expect(await head('events_settle(0)')).toBe(3);
    // A recorded time ahead of the clock (set back since) skips nothing.
    await sql`update events_counter set settled_at = clock_timestamp() + interval '1 hour'`.execute(db);
    await writeArtist();
    expect(await head('events_settle(3600000)')).toBe(4);
    expect(await pending()).toBe(0);
    const { rows } = await sql<{ sequence: string; path: string }>`select sequence, path from events order by sequence`.execute(db);
    expect(rows.map((r) => Number(r.sequence))).toEqual([1, 2, 3, 4]);
  });
});
