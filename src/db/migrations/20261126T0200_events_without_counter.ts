import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// Events without a counter row that writers take (issue 32; PostgreSQL only, SQLite keeps its rowid).
//
// Before: every writing transaction took its numbers from the one events_counter row, holding its lock
// until commit, so all writers of every table queued behind each other. Now the triggers append their
// events UNNUMBERED to `events_pending`: `stmt` (one value of a sequence per trigger call; nextval takes
// no lock that lasts) and `ord` (the row's place in that call) keep each transaction's events in the
// order it made them, cascade deletions first as before. Nothing is shared between writers.
//
// `events_publish()` numbers them: under a lock on events_counter that only publishers take, it moves
// every committed pending row into `events`, numbered after the counter, and moves the counter. At read
// committed each statement sees what committed before it began, so once the lock is granted the move
// sees everything committed before (the previous publisher's move included: nothing is numbered twice).
// The lock is held until commit, and a transaction is visible before its locks go, so publishers commit
// in the order of their numbers: no reader sees N+1 before N has committed. A transaction still in
// flight is simply not moved; it is numbered by a later publish, after events that committed before it.
// Readers publish before they read (events.publisher.ts): what committed before a read is in it.
//
// When nothing is pending the function only reads (no lock, no write transaction). The lock is a table
// lock (EXCLUSIVE: plain reads of the counter go on): a publisher that finds nothing left once it gets
// it has written nothing and commits without a WAL flush. A publish that moved rows commits with
// synchronous_commit on whatever the session says: a number a reader saw must survive a crash.
//
// `down` publishes what is pending and puts the counter triggers back (the form 20261124T0800 made).

const TABLES = ['artists', 'albums', 'songs', 'users', 'aliases'] as const;
type Table = (typeof TABLES)[number];

/** How a table's rows become events (frozen copy of 20261124T0800's): `x` names the row. */
interface Shape {
  type: string;
  joins: (x: string) => string;
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

/**
 * How a trigger records the events a SELECT yields. `counter` (20261124T0800's form): numbered from
 * the counter row in the writing transaction, the SELECT's first column being `last - n + row_number()`.
 * `pending`: appended unnumbered, the first columns being `stmt_no` (this call's value) and `row_number()`.
 */
type Form = 'counter' | 'pending';

const ID = `replace(gen_random_uuid()::text, '-', '')`;
const obj = (fields: [string, string][]) => `json_build_object(${fields.map(([k, v]) => `'${k}', ${v}`).join(', ')})::text`;
const head = (form: Form, order: string) =>
  form === 'counter' ? `last - n + row_number() over (order by ${order}), ` : `stmt_no, row_number() over (order by ${order}), `;

/** The SELECT of a statement's events, from the transition table `rows` (aliased r). */
function selectEvents(form: Form, table: Table, verb: string, rows: string): string {
  const s = SHAPES[table];
  const resource = obj((verb === 'deleted' ? s.deletedFields : s.fields).map((f) => [f, `r.${f}`]));
  const guard = verb === 'deleted' ? s.parentExists('r') : 'true';
  return `select ${head(form, 'r.id')}${ID}, '${s.type}.${verb}', ${s.path('r')}, ${resource}, events_now() from ${rows} r ${s.joins('r')} where ${guard} order by r.id`;
}

/** Deletions of the children of `old` (a parent row about to be deleted). */
function childDeletes(form: Form, what: 'albums' | 'artists-songs' | 'artists-albums'): string {
  if (what === 'albums') {
    return `select ${head(form, 's.id')}${ID}, 'song.deleted', '/artists/' || old.artist_id || '/albums/' || old.id || '/songs/' || s.id, ${obj([['id', 's.id']])}, events_now()
      from songs s where s.album_id = old.id and exists (select 1 from artists p where p.id = old.artist_id) order by s.id`;
  }
  if (what === 'artists-songs') {
    return `select ${head(form, 'a.id, s.id')}${ID}, 'song.deleted', '/artists/' || old.id || '/albums/' || a.id || '/songs/' || s.id, ${obj([['id', 's.id']])}, events_now()
      from albums a join songs s on s.album_id = a.id where a.artist_id = old.id order by a.id, s.id`;
  }
  return `select ${head(form, 'a.id')}${ID}, 'album.deleted', '/artists/' || old.id || '/albums/' || a.id, ${obj([['id', 'a.id']])}, events_now()
    from albums a where a.artist_id = old.id order by a.id`;
}

/** The body that records what the SELECTs yield, in the given form. */
function record(form: Form, selects: string[]): string {
  if (form === 'pending') {
    return selects
      .map((select) => `stmt_no := nextval('events_pending_stmt'); insert into events_pending (stmt, ord, id, type, path, resource, at) ${select};`)
      .join('');
  }
  return selects
    .map(
      (select) => `
  select count(*) into n from (${select}) as counted;
  if n > 0 then
    last := events_take(n);
    insert into events (sequence, id, type, path, resource, at) ${select};
  end if;`,
    )
    .join('');
}

/** Replaces every event trigger function (the triggers stay: they call these by name). */
async function replaceTriggerFunctions(db: Kysely<unknown>, form: Form): Promise<void> {
  const declare = form === 'counter' ? 'n bigint; last bigint;' : 'stmt_no bigint;';
  const fn = (name: string, body: string, returns: string) =>
    sql`create or replace function ${sql.id(name)}() returns trigger language plpgsql as ${sql.raw(`$$ declare ${declare} begin ${body} return ${returns}; end $$`)}`.execute(
      db,
    );
  for (const table of TABLES) {
    for (const { op, verb } of OPS) {
      await fn(`${table}_events_${op}`, record(form, [selectEvents(form, table, verb, op === 'delete' ? 'old_rows' : 'new_rows')]), 'null');
    }
  }
  await fn('albums_events_cascade', record(form, [childDeletes(form, 'albums')]), 'old');
  await fn('artists_events_cascade', record(form, [childDeletes(form, 'artists-songs'), childDeletes(form, 'artists-albums')]), 'old');
}

const PUBLISH = `
declare
  last bigint;
  n bigint;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    raise exception 'events_publish() runs at read committed: each of its statements must see what committed before it';
  end if;
  if not exists (select 1 from events_pending) then
    return (select value from events_counter);
  end if;
  lock table events_counter in exclusive mode;
  select value into last from events_counter;
  with moved as (delete from events_pending returning stmt, ord, id, type, path, resource, at)
  insert into events (sequence, id, type, path, resource, at)
    select last + row_number() over (order by stmt, ord), id, type, path, resource, at from moved;
  get diagnostics n = row_count;
  if n = 0 then
    return last;
  end if;
  update events_counter set value = last + n;
  perform set_config('synchronous_commit', 'on', true);
  return last + n;
end`;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create sequence events_pending_stmt`.execute(db);
  await db.schema
    .createTable('events_pending')
    .addColumn('stmt', 'bigint', (c) => c.notNull())
    .addColumn('ord', 'bigint', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('events_pending_pkey', ['stmt', 'ord'])
    .execute();
  // A queue: rows live from a write to the next publish. Vacuumed often, so "is anything pending"
  // stays a look at a few pages.
  await sql`alter table events_pending set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000)`.execute(db);
  await sql`create function events_publish() returns bigint language plpgsql volatile as ${sql.raw(`$$${PUBLISH}$$`)}`.execute(db);
  // A writer still in flight under the old triggers holds its counter row lock, which the first
  // publish's table lock waits for: its numbered events come before anything published.
  await replaceTriggerFunctions(db, 'pending');
  await sql`drop function events_take(bigint)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  // Waits for every writer that appended pending events and has not finished; later ones wait for this.
  await sql`lock table events_pending in access exclusive mode`.execute(db);
  await sql`create function events_take(n bigint) returns bigint language sql volatile as
    $$ update events_counter set value = value + n returning value $$`.execute(db);
  await replaceTriggerFunctions(db, 'counter');
  // What is pending is numbered now, before its table goes: nothing written is lost.
  await sql`select events_publish()`.execute(db);
  await sql`drop function events_publish()`.execute(db);
  await db.schema.dropTable('events_pending').execute();
  await sql`drop sequence events_pending_stmt`.execute(db);
}
