import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';
import { collationKey, fold, nfc, searchedFoldSql } from '../collation.js';

// Names sorted as people read them (issue 33; src/db/collation.ts says how). Every name field gets
// its collation key beside it: `name_key` on artists, albums and songs, `first_name_key`,
// `last_name_key` and `country_key` on users, and `country_fold` (the fold alone, what `lives_in`
// compares). Keys are compared by byte on both backends (PostgreSQL: collation "binary", locale C).
//
// What changes with them:
// - the existing rows get their keys, and their names in NFC (one text, one value), in batches of
//   BATCH rows, with the tables' UPDATE triggers suspended meanwhile (the same text in its canonical
//   form is no event, no new version; the summaries and search index are rebuilt below);
// - every index that held `lower(x collate "binary")` holds the key instead, in the same places
//   (sort, prefix range, exact name, a country's users); the users' country is split into its order
//   index (`country_key`) and its filter index (`country_fold`: `users_country_fold_asc`, the one
//   `lives_in` pages in id order through);
// - users_counts counts users per (status, country_fold, country_key, age), so its values give the
//   country sort's values in order and `lives_in` its fold; users_name_counts counts keys;
// - the search index holds each name's fold (SQLite FTS5 contentless, PostgreSQL GIN), so `q` and
//   GET /search match regardless of accents and case on both backends alike;
// - a name written without its key, or renamed without it, is refused by the database (SQLite
//   triggers, PostgreSQL NOT NULL and CHECK constraints): the service, seed and import are the
//   writers that compute keys; a hand-written row must carry them (src/db/collation.ts). The check is
//   that the key ends with U+0001 and the text; the fold itself only the service computes.

const BATCH = 1000;

/** Per table, its name columns (each with `<column>_key`). */
const KEYED = {
  artists: ['name'],
  albums: ['name'],
  songs: ['name'],
  users: ['first_name', 'last_name', 'country'],
} as const;
type Keyed = keyof typeof KEYED;
const TABLES = Object.keys(KEYED) as Keyed[];

// Frozen with this migration (the runtime copy is modules/users/users.table.ts, which a later
// migration may change without changing what this one did).

/** The users order indexes, per sortable field: the key, then the rest (ties by id ascending; filtered columns carried). */
export const USERS_ORDER_INDEXES = {
  first_name: ['first_name_key', 'id, status, age, country_fold, last_name_key'],
  last_name: ['last_name_key', 'id, status, age, country_fold, first_name_key'],
  age: ['age', 'id, status, country_fold'],
  status: ['status collate "binary"', 'id, age, country_fold'],
  country: ['country_key', 'id, status, age, country_fold'],
} as const;

/** The users indexes led by the country's fold: in id order, and in each name's order (both directions). */
export const USERS_COUNTRY_NAME_INDEXES = ['first_name', 'last_name'] as const;

function newIndexes(): [name: string, table: string, columns: string][] {
  const out: [string, string, string][] = [
    ['artists_name_idx', 'artists', 'name_key, id'],
    ['artists_name_desc_idx', 'artists', 'name_key desc, id'],
    ['albums_artist_name_idx', 'albums', 'artist_id, name_key, id'],
    ['songs_album_name_idx', 'songs', 'album_id, name_key, id'],
    ['users_status_age_idx', 'users', 'status, age desc, first_name_key, id'],
    ['users_country_idx', 'users', 'country_fold, status, id, age'],
    ['users_country_fold_asc', 'users', 'country_fold, id, status, age, country_key'],
  ];
  for (const [field, [key, rest]] of Object.entries(USERS_ORDER_INDEXES)) {
    out.push([`users_${field}_asc`, 'users', `${key}, ${rest}`], [`users_${field}_desc`, 'users', `${key} desc, ${rest}`]);
  }
  for (const field of USERS_COUNTRY_NAME_INDEXES) {
    for (const direction of ['asc', 'desc']) {
      out.push([
        `users_country_${field}_${direction}`,
        'users',
        `country_fold, ${field}_key${direction === 'desc' ? ' desc' : ''}, id, status, age, country_key`,
      ]);
    }
  }
  return out;
}

/** The indexes this migration replaces, as the earlier migrations left them: name, table, columns (down() makes them again). */
function oldIndexes(pg: boolean): [name: string, table: string, columns: string][] {
  const folded = (col: string) => `lower(${col} collate "binary")`;
  const country = folded('country');
  // PostgreSQL: migration 20261124T1200 made the users indexes that hold a folded column carry it (INCLUDE).
  const include = (cols: string[]) => (pg ? `) include (${cols.join(', ')}` : '');
  const out: [string, string, string][] = [
    ['artists_name_idx', 'artists', `${folded('name')}, id`],
    ['artists_name_desc_idx', 'artists', `${folded('name')} desc, id`],
    ['albums_artist_name_idx', 'albums', `artist_id, ${folded('name')}, id`],
    ['songs_album_name_idx', 'songs', `album_id, ${folded('name')}, id`],
    ['users_status_age_idx', 'users', `status, age desc, ${folded('first_name')}, id${include(['first_name'])}`],
    ['users_country_idx', 'users', `${country}, status, id, age${include(['country'])}`],
  ];
  const other = { first_name: 'last_name', last_name: 'first_name' } as const;
  for (const field of ['first_name', 'last_name'] as const) {
    for (const d of ['asc', 'desc']) {
      const dir = d === 'desc' ? ' desc' : '';
      out.push([
        `users_${field}_${d}`,
        'users',
        `${folded(field)}${dir}, id, status, age, ${country}, ${folded(other[field])}${include([field, 'country', other[field]])}`,
      ]);
      out.push([`users_country_${field}_${d}`, 'users', `${country}, ${folded(field)}${dir}, id, status, age${include(['country', field])}`]);
    }
  }
  for (const d of ['asc', 'desc']) {
    const dir = d === 'desc' ? ' desc' : '';
    out.push([`users_age_${d}`, 'users', `age${dir}, id, status, ${country}${include(['country'])}`]);
    out.push([`users_status_${d}`, 'users', `${folded('status')}${dir}, id, age, ${country}${include(['status', 'country'])}`]);
    out.push([`users_country_${d}`, 'users', `${country}${dir}, id, status, age${include(['country'])}`]);
  }
  return out;
}

/** Runs `body` atomically: PostgreSQL's migrations already run in one transaction; SQLite's do not. */
async function atomically(db: Kysely<unknown>, body: (db: Kysely<unknown>) => Promise<void>): Promise<void> {
  if (isPostgres(db)) return body(db);
  await db.transaction().execute((trx) => body(trx));
}

/** SQLite: the triggers on `table` that fire on an UPDATE, as their CREATE statements. */
async function sqliteUpdateTriggers(db: Kysely<unknown>, table: string): Promise<{ name: string; sql: string }[]> {
  const { rows } = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master where type = 'trigger' and tbl_name = ${table} order by name`.execute(db);
  return rows.filter((t) => /\bupdate\b/i.test(t.sql.split(/\bbegin\b/i)[0]!));
}

/**
 * Runs `body` with the UPDATE triggers of the keyed tables suspended (events, versions): filling the
 * keys and putting names in NFC changes no resource (the same text), so it records no event.
 */
async function withoutUpdateTriggers(db: Kysely<unknown>, body: () => Promise<void>): Promise<void> {
  if (isPostgres(db)) {
    for (const table of TABLES) await sql`alter table ${sql.table(table)} disable trigger user`.execute(db);
    await body();
    for (const table of TABLES) await sql`alter table ${sql.table(table)} enable trigger user`.execute(db);
    return;
  }
  const saved: { name: string; sql: string }[] = [];
  for (const table of TABLES) saved.push(...(await sqliteUpdateTriggers(db, table)));
  for (const t of saved) await sql`drop trigger ${sql.id(t.name)}`.execute(db);
  await body();
  // The definitions come from the database's own catalogue, not from any input.
  for (const t of saved) await sql.raw(t.sql).execute(db);
}

/** Every row's names in NFC with their keys, BATCH rows per statement (by id). */
async function fillKeys(db: Kysely<unknown>, table: Keyed): Promise<void> {
  const columns = KEYED[table];
  const pg = isPostgres(db);
  const sets = columns.flatMap((c) => [`${c} = v.${c}`, `${c}_key = v.${c}_key`]);
  if (table === 'users') sets.push('country_fold = v.country_fold');
  const names = ['id', ...columns.flatMap((c) => [c, `${c}_key`]), ...(table === 'users' ? ['country_fold'] : [])];
  for (let after = 0; ;) {
    const { rows } = await sql<Record<string, string | number>>`
      select id, ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table)} where id > ${after} order by id limit ${BATCH}`.execute(db);
    if (rows.length === 0) return;
    const values = rows.map((row) => {
      const out: unknown[] = [Number(row.id)];
      for (const c of columns) {
        const text = nfc(String(row[c]));
        out.push(text, collationKey(text));
      }
      if (table === 'users') out.push(fold(nfc(String(row.country))));
      return sql`(${sql.join(out.map((v, i) => (i === 0 && pg ? sql`cast(${v} as integer)` : sql`${v}`)))})`;
    });
    await sql`with v(${sql.raw(names.join(', '))}) as (values ${sql.join(values)})
      update ${sql.table(table)} set ${sql.raw(sets.join(', '))} from v where ${sql.table(table)}.id = v.id`.execute(db);
    after = Number(rows[rows.length - 1]!.id);
  }
}

/** The check that a row's keys belong to its text: each key ends with U+0001 and the text; the fold leads the country's key. */
function keyChecks(pg: boolean, table: Keyed, row = ''): string[] {
  const r = row ? `${row}.` : '';
  const ends = (c: string) =>
    pg ? `right(${r}${c}_key, length(${r}${c}) + 1) = chr(1) || ${r}${c}` : `substr(${r}${c}_key, -length(${r}${c}) - 1) = char(1) || ${r}${c}`;
  const checks = KEYED[table].map(ends);
  if (table === 'users') {
    checks.push(
      pg
        ? `left(${r}country_key, length(${r}country_fold) + 1) = ${r}country_fold || chr(1)`
        : `substr(${r}country_key, 1, length(${r}country_fold) + 1) = ${r}country_fold || char(1)`,
    );
  }
  return checks;
}

async function guardKeys(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  for (const table of TABLES) {
    const keyColumns = [...KEYED[table].map((c) => `${c}_key`), ...(table === 'users' ? ['country_fold'] : [])];
    if (pg) {
      for (const c of keyColumns) await sql`alter table ${sql.table(table)} alter column ${sql.ref(c)} set not null`.execute(db);
      await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_keys_check`)} check (${sql.raw(keyChecks(pg, table).join(' and '))})`.execute(
        db,
      );
      continue;
    }
    const wrong = sql.raw(`${keyColumns.map((c) => `new.${c} is null`).join(' or ')} or not (${keyChecks(pg, table, 'new').join(' and ')})`);
    const message = sql.lit(`${table}: a name's key is missing or is not its own (src/db/collation.ts computes it)`);
    const written = sql.raw([...KEYED[table], ...keyColumns].join(', '));
    await sql`create trigger ${sql.id(`${table}_keys_insert`)} before insert on ${sql.table(table)} when ${wrong}
      begin select raise(abort, ${message}); end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_keys_update`)} before update of ${written} on ${sql.table(table)} when ${wrong}
      begin select raise(abort, ${message}); end`.execute(db);
  }
}

async function dropGuards(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  for (const table of TABLES) {
    if (pg) {
      await sql`alter table ${sql.table(table)} drop constraint if exists ${sql.id(`${table}_keys_check`)}`.execute(db);
      continue;
    }
    for (const op of ['insert', 'update']) await sql`drop trigger if exists ${sql.id(`${table}_keys_${op}`)}`.execute(db);
  }
}

/** users_counts per (status, country_fold, country_key, age), and users_name_counts per key: tables, contents and triggers. */
async function summaries(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const binary = pg ? sql` collate "binary"` : sql``;
  await sql`create table users_counts (
    status text not null, country_fold text${binary} not null, country_key text${binary} not null, age integer not null, n integer not null,
    constraint users_counts_pkey primary key (status, country_key, age))`.execute(db);
  await sql`insert into users_counts (status, country_fold, country_key, age, n)
    select status, country_fold, country_key, age, count(*) from users group by status, country_fold, country_key, age`.execute(db);
  await sql`delete from users_name_counts`.execute(db);
  for (const field of ['first_name', 'last_name']) {
    await sql`insert into users_name_counts (field, name, n) select ${field}, ${sql.ref(`${field}_key`)}, count(*) from users group by 2`.execute(db);
  }
  if (pg) {
    await sql`alter table users_counts set (fillfactor = 50)`.execute(db);
    // As migrations 20261124T0100 and 20261124T0900 made them (see there), on the new columns.
    const counts = (select: string) =>
      `insert into users_counts as c (status, country_fold, country_key, age, n)
        select status, country_fold, country_key, age, sum(n) from (${select}) as moved group by 1, 2, 3, 4 having sum(n) <> 0 order by 1, 3, 4
        on conflict (status, country_key, age) do update set n = c.n + excluded.n`;
    const countRows = (table: string, sign: number) => `select status, country_fold, country_key, age, ${sign} as n from ${table}`;
    const names = (select: string) =>
      `insert into users_name_counts as c (field, name, n)
        select field, name, sum(n) from (${select}) as moved group by 1, 2 having sum(n) <> 0 order by 1, 2
        on conflict (field, name) do update set n = c.n + excluded.n`;
    const nameRows = (table: string, sign: number) =>
      ['first_name', 'last_name'].map((f) => `select '${f}'::text as field, ${f}_key as name, ${sign} as n from ${table}`).join(' union all ');
    const fn = (name: string, body: string) =>
      sql`create function ${sql.id(name)}() returns trigger language plpgsql as ${sql.raw(`$$ begin ${body}; return null; end $$`)}`.execute(db);
    for (const [summary, upsert, rows] of [
      ['users_counts', counts, countRows],
      ['users_name_counts', names, nameRows],
    ] as const) {
      await fn(`${summary}_added`, upsert(rows('new_rows', 1)));
      await fn(`${summary}_removed`, upsert(rows('old_rows', -1)));
      await fn(`${summary}_moved`, upsert(`${rows('old_rows', -1)} union all ${rows('new_rows', 1)}`));
      await sql`create trigger ${sql.id(`${summary}_insert`)} after insert on users referencing new table as new_rows
        for each statement execute function ${sql.id(`${summary}_added`)}()`.execute(db);
      await sql`create trigger ${sql.id(`${summary}_delete`)} after delete on users referencing old table as old_rows
        for each statement execute function ${sql.id(`${summary}_removed`)}()`.execute(db);
      await sql`create trigger ${sql.id(`${summary}_update`)} after update on users referencing old table as old_rows new table as new_rows
        for each statement execute function ${sql.id(`${summary}_moved`)}()`.execute(db);
    }
    return;
  }
  const add = (row: string) =>
    sql.raw(`insert into users_counts (status, country_fold, country_key, age, n)
    values (${row}.status, ${row}.country_fold, ${row}.country_key, ${row}.age, 1) on conflict (status, country_key, age) do update set n = n + 1`);
  const remove = sql.raw(`update users_counts set n = n - 1 where status = old.status and country_key = old.country_key and age = old.age`);
  await sql`create trigger users_counts_insert after insert on users begin ${add('new')}; end`.execute(db);
  await sql`create trigger users_counts_delete after delete on users begin ${remove}; end`.execute(db);
  await sql`create trigger users_counts_update after update of status, country_fold, country_key, age on users begin ${remove}; ${add('new')}; end`.execute(db);
  const addName = (row: string, field: string) =>
    sql.raw(`insert into users_name_counts (field, name, n) values ('${field}', ${row}.${field}_key, 1) on conflict (field, name) do update set n = n + 1`);
  const removeName = (field: string) => sql.raw(`update users_name_counts set n = n - 1 where field = '${field}' and name = old.${field}_key`);
  await sql`create trigger users_name_counts_insert after insert on users begin ${addName('new', 'first_name')}; ${addName('new', 'last_name')}; end`.execute(
    db,
  );
  await sql`create trigger users_name_counts_delete after delete on users begin ${removeName('first_name')}; ${removeName('last_name')}; end`.execute(db);
  for (const field of ['first_name', 'last_name']) {
    await sql`create trigger ${sql.id(`users_name_counts_update_${field}`)} after update of ${sql.ref(`${field}_key`)} on users
      begin ${removeName(field)}; ${addName('new', field)}; end`.execute(db);
  }
}

/** The summaries' triggers and the old users_counts (any of them, as earlier migrations or this one made them). */
async function dropSummaries(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    for (const summary of ['users_counts', 'users_name_counts']) {
      for (const op of ['insert', 'delete', 'update']) await sql`drop trigger if exists ${sql.id(`${summary}_${op}`)} on users`.execute(db);
      for (const step of ['added', 'removed', 'moved']) await sql`drop function if exists ${sql.id(`${summary}_${step}`)}()`.execute(db);
    }
  } else {
    for (const name of ['users_counts_insert', 'users_counts_delete', 'users_counts_update', 'users_name_counts_insert', 'users_name_counts_delete']) {
      await sql`drop trigger if exists ${sql.id(name)}`.execute(db);
    }
    for (const field of ['first_name', 'last_name']) await sql`drop trigger if exists ${sql.id(`users_name_counts_update_${field}`)}`.execute(db);
  }
  await sql`drop table if exists users_counts`.execute(db);
}

const SEARCHED = [
  { table: 'artists', code: 1 },
  { table: 'albums', code: 2 },
  { table: 'songs', code: 3 },
] as const;

/** The search index over each name's fold (src/db/collation.ts searchedFoldSql), or over the name itself (`keys` false: as before). */
async function searchIndex(db: Kysely<unknown>, keys: boolean): Promise<void> {
  const pg = isPostgres(db);
  if (pg) {
    for (const { table } of SEARCHED) {
      const text = keys ? searchedFoldSql('name_key', true) : 'name';
      await sql`drop index if exists ${sql.id(`${table}_name_fts_idx`)}`.execute(db);
      await sql`create index ${sql.id(`${table}_name_fts_idx`)} on ${sql.table(table)} using gin (to_tsvector('simple', ${sql.raw(text)}))`.execute(db);
    }
    return;
  }
  // As migration 20261123T0100 made it (contentless), fed the fold instead of the name.
  for (const { table } of SEARCHED) {
    for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.id(`${table}_search_${op}`)}`.execute(db);
  }
  await sql`drop table if exists search_index`.execute(db);
  await sql`create virtual table search_index using fts5(name, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2')`.execute(db);
  const column = keys ? 'name_key' : 'name';
  const text = (row: string) => sql.raw(keys ? searchedFoldSql(`${row}.name_key`, false) : `${row}.name`);
  for (const { table, code } of SEARCHED) {
    const t = sql.table(table);
    const c = sql.lit(code);
    await sql`create trigger ${sql.id(`${table}_search_insert`)} after insert on ${t} begin
      insert into search_index(rowid, name) values (new.id * 4 + ${c}, ${text('new')}); end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_search_update`)} after update of ${sql.ref(column)} on ${t} begin
      update search_index set name = ${text('new')} where rowid = new.id * 4 + ${c}; end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_search_delete`)} after delete on ${t} begin
      delete from search_index where rowid = old.id * 4 + ${c}; end`.execute(db);
    await sql`insert into search_index(rowid, name) select id * 4 + ${c}, ${text(table)} from ${t}`.execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await atomically(db, async (db) => {
    const pg = isPostgres(db);
    for (const table of TABLES) {
      const columns = [...KEYED[table].map((c) => `${c}_key`), ...(table === 'users' ? ['country_fold'] : [])];
      for (const c of columns) await sql`alter table ${sql.table(table)} add column ${sql.ref(c)} text${sql.raw(pg ? ' collate "binary"' : '')}`.execute(db);
    }
    // Replaced below; dropped first, so that filling the keys updates no index on the old folds.
    for (const [name] of oldIndexes(pg)) await sql`drop index if exists ${sql.id(name)}`.execute(db);
    if (pg) for (const { table } of SEARCHED) await sql`drop index if exists ${sql.id(`${table}_name_fts_idx`)}`.execute(db);
    await dropSummaries(db);
    await withoutUpdateTriggers(db, async () => {
      for (const table of TABLES) await fillKeys(db, table);
    });
    await guardKeys(db);
    for (const [name, table, columns] of newIndexes()) await sql`create index ${sql.id(name)} on ${sql.table(table)} (${sql.raw(columns)})`.execute(db);
    await summaries(db);
    await searchIndex(db, true);
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await atomically(db, async (db) => {
    const pg = isPostgres(db);
    await dropGuards(db);
    for (const [name] of newIndexes()) await sql`drop index if exists ${sql.id(name)}`.execute(db);
    await dropSummaries(db);
    // users_counts and users_name_counts as migrations 20261124T0100 and 20261124T0900 made them.
    await sql`create table users_counts (status text not null, country text not null, age integer not null, n integer not null,
      constraint users_counts_pkey primary key (status, country, age))`.execute(db);
    await sql`insert into users_counts (status, country, age, n)
      select status, lower(country collate "binary"), age, count(*) from users group by 1, 2, 3`.execute(db);
    await sql`delete from users_name_counts`.execute(db);
    for (const field of ['first_name', 'last_name']) {
      await sql`insert into users_name_counts (field, name, n) select ${field}, lower(${sql.ref(field)} collate "binary"), count(*) from users group by 2`.execute(
        db,
      );
    }
    await oldSummaryTriggers(db);
    await searchIndex(db, false);
    for (const table of TABLES) {
      const columns = [...KEYED[table].map((c) => `${c}_key`), ...(table === 'users' ? ['country_fold'] : [])];
      for (const c of columns) await sql`alter table ${sql.table(table)} drop column ${sql.ref(c)}`.execute(db);
    }
    for (const [name, table, columns] of oldIndexes(pg)) await sql`create index ${sql.id(name)} on ${sql.table(table)} (${sql.raw(columns)})`.execute(db);
  });
}

/** The triggers of users_counts and users_name_counts on the ASCII-folded columns, as migrations 20261124T0100 and 0900 made them. */
async function oldSummaryTriggers(db: Kysely<unknown>): Promise<void> {
  const folded = (row: string, col: string) => `lower(${row}.${col} collate "binary")`;
  if (isPostgres(db)) {
    await sql`alter table users_counts set (fillfactor = 50)`.execute(db);
    const counts = (select: string) => `insert into users_counts as c (status, country, age, n)
      select status, country, age, sum(n) from (${select}) as moved group by 1, 2, 3 having sum(n) <> 0 order by 1, 2, 3
      on conflict (status, country, age) do update set n = c.n + excluded.n`;
    const countRows = (t: string, sign: number) => `select status, lower(country collate "binary") as country, age, ${sign} as n from ${t}`;
    const names = (select: string) => `insert into users_name_counts as c (field, name, n)
      select field, name, sum(n) from (${select}) as moved group by 1, 2 having sum(n) <> 0 order by 1, 2
      on conflict (field, name) do update set n = c.n + excluded.n`;
    const nameRows = (t: string, sign: number) =>
      ['first_name', 'last_name'].map((f) => `select '${f}'::text as field, lower(${f} collate "binary") as name, ${sign} as n from ${t}`).join(' union all ');
    for (const [summary, upsert, rows] of [
      ['users_counts', counts, countRows],
      ['users_name_counts', names, nameRows],
    ] as const) {
      for (const [step, select] of [
        ['added', rows('new_rows', 1)],
        ['removed', rows('old_rows', -1)],
        ['moved', `${rows('old_rows', -1)} union all ${rows('new_rows', 1)}`],
      ] as const) {
        await sql`create function ${sql.id(`${summary}_${step}`)}() returns trigger language plpgsql as ${sql.raw(`$$ begin ${upsert(select)}; return null; end $$`)}`.execute(
          db,
        );
      }
      await sql`create trigger ${sql.id(`${summary}_insert`)} after insert on users referencing new table as new_rows
        for each statement execute function ${sql.id(`${summary}_added`)}()`.execute(db);
      await sql`create trigger ${sql.id(`${summary}_delete`)} after delete on users referencing old table as old_rows
        for each statement execute function ${sql.id(`${summary}_removed`)}()`.execute(db);
      await sql`create trigger ${sql.id(`${summary}_update`)} after update on users referencing old table as old_rows new table as new_rows
        for each statement execute function ${sql.id(`${summary}_moved`)}()`.execute(db);
    }
    return;
  }
  const add = (row: string) =>
    sql.raw(`insert into users_counts (status, country, age, n) values (${row}.status, ${folded(row, 'country')}, ${row}.age, 1)
    on conflict (status, country, age) do update set n = n + 1`);
  const remove = sql.raw(`update users_counts set n = n - 1 where status = old.status and country = ${folded('old', 'country')} and age = old.age`);
  await sql`create trigger users_counts_insert after insert on users begin ${add('new')}; end`.execute(db);
  await sql`create trigger users_counts_delete after delete on users begin ${remove}; end`.execute(db);
  await sql`create trigger users_counts_update after update of status, country, age on users begin ${remove}; ${add('new')}; end`.execute(db);
  const addName = (row: string, f: string) =>
    sql.raw(`insert into users_name_counts (field, name, n) values ('${f}', ${folded(row, f)}, 1) on conflict (field, name) do update set n = n + 1`);
  const removeName = (f: string) => sql.raw(`update users_name_counts set n = n - 1 where field = '${f}' and name = ${folded('old', f)}`);
  await sql`create trigger users_name_counts_insert after insert on users begin ${addName('new', 'first_name')}; ${addName('new', 'last_name')}; end`.execute(
    db,
  );
  await sql`create trigger users_name_counts_delete after delete on users begin ${removeName('first_name')}; ${removeName('last_name')}; end`.execute(db);
  for (const f of ['first_name', 'last_name']) {
    await sql`create trigger ${sql.id(`users_name_counts_update_${f}`)} after update of ${sql.ref(f)} on users begin ${removeName(f)}; ${addName('new', f)}; end`.execute(
      db,
    );
  }
}
