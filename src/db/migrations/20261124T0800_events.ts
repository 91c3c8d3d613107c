import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from './util.js';

// The events outbox (issue 19): every create, update and delete of an artist, album, song, user or
// alias records an event in the same transaction, written by triggers so that every writer is covered
// (the API, group commit, multi-row batches, seed, import, a psql session) and nothing committed goes
// unrecorded. The resource is built in the API's field names, as GET returns it.
//
// The sequence is strictly increasing and a reader never sees event N+1 before N has committed:
// - SQLite serialises writers; the rowid (one more than the largest) numbers rows in commit order.
//   Without AUTOINCREMENT (which costs a write of sqlite_sequence per row): a number could be reused
//   only if the newest row were deleted, and retention never deletes it (events.repository.ts).
// - PostgreSQL commits concurrent transactions in any order, so a sequence or identity column would
//   let a reader see 8 committed while 7 is still in flight (and then miss 7 with `after=8`). Numbers
//   come instead from one counter row, updated in the writing transaction: its row lock is held until
//   commit, so the next writer gets its numbers only once the previous one has committed (or rolled
//   back, taking its numbers with it: no gap either). Writers of one table already queue on their
//   table_versions row (migration 20261124T0100), so songs written concurrently lose nothing more; the
//   counter makes writers of different tables queue too, which is the price of one total order.
//
// Deletes cascade (album -> songs, artist -> albums): when a child's trigger runs its parent row is
// already gone, so its path could not be built. A parent's BEFORE DELETE trigger therefore records
// its descendants' deletions (children exist then), and a child's own delete trigger records only
// deletes whose parent still exists (a direct delete).

const TABLES = ['artists', 'albums', 'songs', 'users', 'aliases'] as const;
type Table = (typeof TABLES)[number];

/** How a table's rows become events; `x` names the row (a transition table's alias, or new/old). */
interface Shape {
  type: string;
  /** Joins the path needs (`al`: the album of a song). */
  joins: (x: string) => string;
  /** Deletes record only rows whose parent still exists (a direct delete, not a cascade). */
  parentExists: (x: string) => string;
  path: (x: string) => string;
  fields: string[];
  deletedFields: string[];
}

const SHAPES: Record<Table, Shape> = {
  artists: {
    type: 'artist',
    joins: () => '',
    parentExists: () => 'true',
    path: (x) => `'/artists/' || ${x}.id`,
    fields: ['id', 'name', 'image'],
    deletedFields: ['id'],
  },
  albums: {
    type: 'album',
    joins: () => '',
    parentExists: (x) => `exists (select 1 from artists p where p.id = ${x}.artist_id)`,
    path: (x) => `'/artists/' || ${x}.artist_id || '/albums/' || ${x}.id`,
    fields: ['id', 'name', 'year', 'image'],
    deletedFields: ['id'],
  },
  songs: {
    type: 'song',
    joins: (x) => `join albums al on al.id = ${x}.album_id`,
    parentExists: () => 'true',
    path: (x) => `'/artists/' || al.artist_id || '/albums/' || ${x}.album_id || '/songs/' || ${x}.id`,
    fields: ['id', 'name', 'time'],
    deletedFields: ['id'],
  },
  users: {
    type: 'user',
    joins: () => '',
    parentExists: () => 'true',
    path: (x) => `'/users/' || ${x}.id`,
    fields: ['id', 'first_name', 'last_name', 'email', 'age', 'status', 'country'],
    deletedFields: ['id'],
  },
  aliases: {
    type: 'alias',
    joins: () => '',
    parentExists: () => 'true',
    path: (x) => `'/aliases/' || ${x}.collection || '/' || ${x}.name`,
    fields: ['name', 'collection', 'query'],
    deletedFields: ['name', 'collection'],
  },
};

const OPS = [
  { op: 'insert', verb: 'created' },
  { op: 'update', verb: 'updated' },
  { op: 'delete', verb: 'deleted' },
] as const;

const jsonFn = (pg: boolean, fields: [string, string][]) => `${pg ? 'json_build_object' : 'json_object'}(${fields.map(([k, v]) => `'${k}', ${v}`).join(', ')})`;

const SQLITE_NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
const SQLITE_ID = 'lower(hex(randomblob(16)))';

/**
 * The SELECT of a statement's events. PostgreSQL: from the transition table `rows` (aliased r),
 * numbered from `last - n` (pgRecord); SQLite: from the trigger's row (`new`/`old`), numbered by
 * the rowid.
 */
function selectEvents(pg: boolean, table: Table, verb: string, rows: string): string {
  const s = SHAPES[table];
  const x = pg ? 'r' : rows;
  const resource = jsonFn(
    pg,
    (verb === 'deleted' ? s.deletedFields : s.fields).map((f) => [f, `${x}.${f}`]),
  );
  const guard = verb === 'deleted' ? s.parentExists(x) : 'true';
  const head = pg
    ? `last - n + row_number() over (order by r.id), replace(gen_random_uuid()::text, '-', ''), '${s.type}.${verb}', ${s.path(x)}, ${resource}::text, events_now()`
    : `${SQLITE_ID}, '${s.type}.${verb}', ${s.path(x)}, ${resource}, ${SQLITE_NOW}`;
  return `select ${head} from ${pg ? `${rows} r` : '(select 1) one'} ${s.joins(x)} where ${guard}${pg ? ' order by r.id' : ''}`;
}

async function createTables(db: Kysely<unknown>, pg: boolean): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('sequence', pg ? 'bigint' : 'integer', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  if (!pg) return;
  await db.schema
    .createTable('events_counter')
    .addColumn('value', 'bigint', (c) => c.notNull())
    .execute();
  await sql`alter table events_counter set (fillfactor = 10)`.execute(db);
  await sql`insert into events_counter (value) values (0)`.execute(db);
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const cols = 'insert into events (id, type, path, resource, at)';
  for (const table of TABLES) {
    for (const { op, verb } of OPS) {
      const select = selectEvents(false, table, verb, op === 'delete' ? 'old' : 'new');
      await sql`create trigger ${sql.id(`${table}_events_${op}`)} after ${sql.raw(op)} on ${sql.table(table)} begin ${sql.raw(cols)} ${sql.raw(select)}; end`.execute(
        db,
      );
    }
  }
  // Descendants of a deleted parent, recorded while they still exist (see the top of this file).
  await sql`create trigger albums_events_cascade before delete on albums begin
    ${sql.raw(cols)} ${sql.raw(childDeletes(false, 'albums'))}; end`.execute(db);
  await sql`create trigger artists_events_cascade before delete on artists begin
    ${sql.raw(cols)} ${sql.raw(childDeletes(false, 'artists-songs'))};
    ${sql.raw(cols)} ${sql.raw(childDeletes(false, 'artists-albums'))}; end`.execute(db);
}

/** Deletions of the children of `old` (a parent row about to be deleted), in the dialect's terms. */
function childDeletes(pg: boolean, what: 'albums' | 'artists-songs' | 'artists-albums'): string {
  const id = pg ? `replace(gen_random_uuid()::text, '-', '')` : SQLITE_ID;
  const now = pg ? 'events_now()' : SQLITE_NOW;
  const seq = (order: string) => (pg ? `last - n + row_number() over (order by ${order}), ` : '');
  const obj = (v: string) => jsonFn(pg, [['id', v]]) + (pg ? '::text' : '');
  if (what === 'albums') {
    return `select ${seq('s.id')}${id}, 'song.deleted', '/artists/' || old.artist_id || '/albums/' || old.id || '/songs/' || s.id, ${obj('s.id')}, ${now}
      from songs s where s.album_id = old.id and exists (select 1 from artists p where p.id = old.artist_id) order by s.id`;
  }
  if (what === 'artists-songs') {
    return `select ${seq('a.id, s.id')}${id}, 'song.deleted', '/artists/' || old.id || '/albums/' || a.id || '/songs/' || s.id, ${obj('s.id')}, ${now}
      from albums a join songs s on s.album_id = a.id where a.artist_id = old.id order by a.id, s.id`;
  }
  return `select ${seq('a.id')}${id}, 'album.deleted', '/artists/' || old.id || '/albums/' || a.id, ${obj('a.id')}, ${now}
    from albums a where a.artist_id = old.id order by a.id`;
}

/** Counts the rows a SELECT of events yields, takes as many numbers, then inserts them. */
const pgRecord = (select: string) => `
  select count(*) into n from (${select}) as counted;
  if n > 0 then
    last := events_take(n);
    insert into events (sequence, id, type, path, resource, at) ${select};
  end if;`;

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`create function events_now() returns text language sql volatile as
    $$ select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$`.execute(db);
  // The row lock this takes is what orders writers (see the top of this file).
  await sql`create function events_take(n bigint) returns bigint language sql volatile as
    $$ update events_counter set value = value + n returning value $$`.execute(db);
  const fn = (name: string, body: string, returns: string) =>
    sql`create function ${sql.id(name)}() returns trigger language plpgsql as ${sql.raw(`$$ declare n bigint; last bigint; begin ${body} return ${returns}; end $$`)}`.execute(
      db,
    );
  for (const table of TABLES) {
    for (const { op, verb } of OPS) {
      const rows = op === 'delete' ? 'old_rows' : 'new_rows';
      const name = `${table}_events_${op}`;
      await fn(name, pgRecord(selectEvents(true, table, verb, rows)), 'null');
      await sql`create trigger ${sql.id(name)} after ${sql.raw(op)} on ${sql.table(table)}
        referencing ${sql.raw(op === 'delete' ? 'old' : 'new')} table as ${sql.raw(rows)} for each statement execute function ${sql.id(name)}()`.execute(db);
    }
  }
  await fn('albums_events_cascade', pgRecord(childDeletes(true, 'albums')), 'old');
  await fn('artists_events_cascade', pgRecord(childDeletes(true, 'artists-songs')) + pgRecord(childDeletes(true, 'artists-albums')), 'old');
  for (const table of ['albums', 'artists']) {
    const name = `${table}_events_cascade`;
    await sql`create trigger ${sql.id(name)} before delete on ${sql.table(table)} for each row execute function ${sql.id(name)}()`.execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await createTables(db, pg);
  if (pg) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const drops: RawBuilder<unknown>[] = [];
  for (const table of TABLES) {
    for (const { op } of OPS) {
      const name = `${table}_events_${op}`;
      drops.push(pg ? sql`drop trigger if exists ${sql.id(name)} on ${sql.table(table)}` : sql`drop trigger if exists ${sql.id(name)}`);
      if (pg) drops.push(sql`drop function if exists ${sql.id(name)}()`);
    }
  }
  for (const table of ['albums', 'artists']) {
    const name = `${table}_events_cascade`;
    drops.push(pg ? sql`drop trigger if exists ${sql.id(name)} on ${sql.table(table)}` : sql`drop trigger if exists ${sql.id(name)}`);
    if (pg) drops.push(sql`drop function if exists ${sql.id(name)}()`);
  }
  for (const drop of drops) await drop.execute(db);
  if (pg) {
    await sql`drop function if exists events_take(bigint)`.execute(db);
    await sql`drop function if exists events_now()`.execute(db);
    await db.schema.dropTable('events_counter').execute();
  }
  await db.schema.dropTable('events').execute();
}
