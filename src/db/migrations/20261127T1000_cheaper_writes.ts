import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// Cheaper user writes on PostgreSQL (issue 32; PostgreSQL only, SQLite's row triggers already fire on
// `update of` the counted columns).
//
// - The UPDATE triggers of users_counts and users_name_counts were statement triggers with transition
//   tables (migration 20261126T0300): they ran on every UPDATE of users, a PATCH of a status and an age
//   included, and computed nothing for a name that did not move (the old and new rows net out). Their
//   `old_rows` also made PostgreSQL keep a copy of every updated row for the statement's end. They are
//   now row triggers with a WHEN condition on the counted columns: an update that moves no counted
//   column of a row does not call the function at all (a WHEN on a row trigger is evaluated before the
//   call). One that does appends the row's -1 (old key) and +1 (new key) to the delta, as the statement
//   function did summed per key: a key's count (the sum of its rows) is the same, exact at every instant
//   (the delta is appended in the writing transaction, as before). No trigger of users asks for
//   `old_rows` on UPDATE any more (users_events_update needs `new_rows` only). The cost moves to an
//   UPDATE of many users' counted columns (by hand, in psql: the service updates a batch of PATCHed
//   users at most): one call per row moved instead of one GROUP BY per statement (the folder sums the
//   delta either way).
// - events_pending_rows() (the users index's catch-up, migration 20261127T0200) was a SQL function: its
//   SET clauses keep it from being inlined, and a SQL function is planned again on every call. It is
//   plpgsql now (its plan kept for the session), with the same SET clauses, the same result and STABLE
//   as before: it runs in its caller's snapshot.
// - events_settle(gap_ms) is what the background pass of each process (events.publisher.ts, every
//   PG_SETTLE_MS) calls instead of events_publish(): when another settle pass moved events less than
//   gap_ms ago (events_counter.settled_at), it returns the head and publishes nothing; otherwise it is
//   events_publish(), and when that went past its read-only path (it took a transaction id, under the
//   publishers' lock) it records the time in the same transaction (a time ahead of the clock, set
//   back since, skips nothing). With two workers per
//   instance (or several instances) both passes found rows to move every 100 ms under writes, each a
//   move and a synchronous commit; the process that settled last publishes again one period later
//   (its next pass finds its own time older than the gap, gap < period), so pending rows wait at most
//   a period for a settle pass, as before. events_publish() itself is unchanged (numbering, the lock,
//   readers publishing before they read: every guarantee of docs/events.md), and readers never skip.
//
// `down` puts 20261126T0300's statement triggers and 20261127T0200's SQL function back, and drops
// events_settle() and the column.

const COUNTS_COLUMNS = ['status', 'country_fold', 'country_key', 'age'] as const;
const NAME_FIELDS = ['first_name', 'last_name'] as const;

const changed = (columns: readonly string[]) => columns.map((c) => `old.${c} is distinct from new.${c}`).join(' or ');

const COUNTS_ROW = `
begin
  insert into users_counts_delta (status, country_fold, country_key, age, n)
    values (old.status, old.country_fold, old.country_key, old.age, -1), (new.status, new.country_fold, new.country_key, new.age, 1);
  return null;
end`;

const NAME_COUNTS_ROW = `
begin
  ${NAME_FIELDS.map(
    (f) => `if old.${f}_key is distinct from new.${f}_key then
    insert into users_name_counts_delta (field, name, n) values ('${f}', old.${f}_key, -1), ('${f}', new.${f}_key, 1);
  end if;`,
  ).join('\n  ')}
  return null;
end`;

const PENDING_ROWS = `
begin
  return query select p.* from events_pending p where p.stmt >= (select c.pending_from from events_counter c);
end`;

const SETTLE = `
declare
  head bigint;
  settled timestamptz;
  published bigint;
begin
  select c.value, c.settled_at into head, settled from events_counter c;
  -- A time ahead of the clock (the clock was set back) skips nothing.
  if settled > clock_timestamp() - make_interval(secs => gap_ms / 1000.0) and settled <= clock_timestamp() then
    return head;
  end if;
  published := events_publish();
  -- It went past its read-only path (it took a transaction id, under the publishers' lock, held until
  -- commit): the time goes in the same transaction.
  if pg_current_xact_id_if_assigned() is not null then
    update events_counter set settled_at = clock_timestamp();
  end if;
  return published;
end`;

// Frozen copies of what 20261126T0300 made (for `down`).
const COUNTS_MOVED = `insert into users_counts_delta (status, country_fold, country_key, age, n) select status, country_fold, country_key, age, sum(n) from (select status, country_fold, country_key, age, -1 as n from old_rows union all select status, country_fold, country_key, age, 1 as n from new_rows) as moved group by status, country_fold, country_key, age having sum(n) <> 0`;
const NAME_COUNTS_MOVED = `insert into users_name_counts_delta (field, name, n) select field, name, sum(n) from (select 'first_name'::text as field, first_name_key as name, -1 as n from old_rows union all select 'last_name'::text as field, last_name_key as name, -1 as n from old_rows union all select 'first_name'::text as field, first_name_key as name, 1 as n from new_rows union all select 'last_name'::text as field, last_name_key as name, 1 as n from new_rows) as moved group by field, name having sum(n) <> 0`;

const SUMMARIES = [
  { name: 'users_counts', when: changed(COUNTS_COLUMNS), row: COUNTS_ROW, moved: COUNTS_MOVED },
  { name: 'users_name_counts', when: changed(NAME_FIELDS.map((f) => `${f}_key`)), row: NAME_COUNTS_ROW, moved: NAME_COUNTS_MOVED },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const { name, when, row } of SUMMARIES) {
    await sql`drop trigger ${sql.id(`${name}_update`)} on users`.execute(db);
    await sql`drop function ${sql.id(`${name}_moved`)}()`.execute(db);
    await sql`create function ${sql.id(`${name}_changed`)}() returns trigger language plpgsql as ${sql.raw(`$$${row}$$`)}`.execute(db);
    await sql`create trigger ${sql.id(`${name}_update`)} after update on users for each row when (${sql.raw(when)})
      execute function ${sql.id(`${name}_changed`)}()`.execute(db);
  }
  await sql`drop function events_pending_rows()`.execute(db);
  await sql`create function events_pending_rows() returns setof events_pending language plpgsql stable
    set enable_seqscan = off set jit = off as ${sql.raw(`$$${PENDING_ROWS}$$`)}`.execute(db);
  await sql`alter table events_counter add column settled_at timestamptz`.execute(db);
  await sql`create function events_settle(gap_ms integer) returns bigint language plpgsql volatile as ${sql.raw(`$$${SETTLE}$$`)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop function events_settle(integer)`.execute(db);
  await sql`alter table events_counter drop column settled_at`.execute(db);
  await sql`drop function events_pending_rows()`.execute(db);
  await sql`create function events_pending_rows() returns setof events_pending language sql stable
    set enable_seqscan = off set jit = off as
    $$ select p.* from events_pending p where p.stmt >= (select c.pending_from from events_counter c) $$`.execute(db);
  for (const { name, moved } of SUMMARIES) {
    await sql`drop trigger ${sql.id(`${name}_update`)} on users`.execute(db);
    await sql`drop function ${sql.id(`${name}_changed`)}()`.execute(db);
    await sql`create function ${sql.id(`${name}_moved`)}() returns trigger language plpgsql as ${sql.raw(`$$ begin ${moved}; return null; end $$`)}`.execute(
      db,
    );
    await sql`create trigger ${sql.id(`${name}_update`)} after update on users referencing old table as old_rows new table as new_rows
      for each statement execute function ${sql.id(`${name}_moved`)}()`.execute(db);
  }
}
