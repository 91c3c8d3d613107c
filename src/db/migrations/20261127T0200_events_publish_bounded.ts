import { sql, type Kysely } from 'kysely';
import { isPostgres } from './util.js';

// events_publish() whose work follows what is pending, not the size of events_pending's heap
// (PostgreSQL only; issue 32).
//
// Before: `delete from events_pending` (no WHERE) and `exists (select 1 from events_pending)` were
// sequential scans, and a queue table's heap holds every row a publish deleted until vacuum clears it
// (and keeps its pages after that unless vacuum can truncate them, which it cannot while writers and
// publishers hold the table). After a burst of writes (an import, a load peak), or while an old snapshot
// keeps vacuum from clearing anything, every publish read the whole heap: 200,000 events moved in one
// publish left 4,651 pages that each later publish of 3 rows read (4,678 buffers), and each publish
// that found nothing (4,652 buffers).
//
// Now both go through the primary key (stmt, ord) from a bound, `events_counter.pending_from`: every
// row still to be published has `stmt >= pending_from` (the rows below it were published, or belong to
// transactions that rolled back). A publish reads the index from the bound: what is pending, plus the
// rows the last publish or two moved (not yet vacuumed), however large the heap.
//
// Why the bound is safe to raise. `stmt` values come from a sequence (no cache: drawn in increasing
// order), and a writer draws one only once it holds a transaction id (its trigger runs after it wrote
// its row). A publish reads the sequence's last value S, then takes its own transaction id X: every
// writer that drew a stmt <= S has an id below X. If a snapshot taken afterwards shows no transaction
// below X still running (its xmin is X: `pg_snapshot_xmin` counts the publish's own id), every such
// writer has committed or rolled back, so the delete that follows (a later snapshot) sees and moves
// every committed row with stmt in [pending_from, S]: the bound becomes S + 1. Under load a writer
// older than the publish is usually running; the publish then leaves (S, X) as a mark
// (`pending_mark`, `pending_mark_xid`), and the first later publish whose snapshot shows every
// transaction up to X finished, before its own delete, raises the bound to the mark and sets a new
// one. Only a transaction with a transaction id (a writer of any table) that stays open holds the
// bound back; a read-only snapshot (a report, pg_dump) does not, though it keeps vacuum from clearing
// the dead rows: those below the bound are never read again.
//
// The guarantees of 20261126T0200 are kept: the lock on events_counter that only publishers take,
// read committed (checked), numbering in (stmt, ord) order after the counter, synchronous commit of a
// publish that moved rows. A publish that only raised the bound or set a mark commits without waiting
// for a WAL flush: losing that in a crash leaves the bound where it was, which is safe.
//
// `events_pending_rows()` gives the rows from the bound to the users index's catch-up, which read the
// heap whole too (after that burst, 4,652 buffers and 9-23 ms a catch-up, with two parallel workers).
//
// The planner is kept off a sequential scan of events_pending (the function's own `enable_seqscan =
// off`): its statistics of a queue table are a guess, and a heap read whole is what this avoids. That
// setting prices events_counter's scan (one page, no index) past `jit_above_cost`, and compiling
// the statements took 30 ms a call: `jit = off` too.
//
// `down` puts 20261126T0200's function back and drops the columns.

const PUBLISH = `
declare
  last bigint;
  n bigint;
  pending boolean;
  bound bigint;
  mark bigint;
  mark_xid xid8;
  oldest xid8;
  drawn bigint;
  me xid8;
  new_bound bigint;
  new_mark bigint;
  new_mark_xid xid8;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    raise exception 'events_publish() runs at read committed: each of its statements must see what committed before it';
  end if;
  -- One snapshot: the head, the bound, and whether anything committed is pending above it.
  select c.value, c.pending_from, c.pending_mark, c.pending_mark_xid, pg_snapshot_xmin(pg_current_snapshot()),
         exists (select 1 from events_pending p where p.stmt >= c.pending_from)
    into last, bound, mark, mark_xid, oldest, pending
    from events_counter c;
  -- Nothing pending, and no mark ready to raise the bound: one read.
  if not pending and (mark_xid is null or oldest <= mark_xid) then
    return last;
  end if;
  lock table events_counter in exclusive mode;
  -- Every stmt drawn so far is at most drawn, by a writer whose transaction id is below me.
  drawn := coalesce(pg_sequence_last_value('events_pending_stmt'), 0);
  me := pg_current_xact_id();
  -- A snapshot after both, before the delete's: who was still running then.
  select c.value, c.pending_from, c.pending_mark, c.pending_mark_xid, pg_snapshot_xmin(pg_current_snapshot())
    into last, bound, mark, mark_xid, oldest
    from events_counter c;
  with moved as (delete from events_pending where stmt >= bound returning stmt, ord, id, type, path, resource, at)
  insert into events (sequence, id, type, path, resource, at)
    select last + row_number() over (order by stmt, ord), id, type, path, resource, at from moved;
  get diagnostics n = row_count;
  new_bound := bound;
  new_mark := mark;
  new_mark_xid := mark_xid;
  if oldest >= me then
    -- No transaction older than this one was running: every stmt up to drawn is published or void.
    new_bound := greatest(bound, drawn + 1);
    new_mark := null;
    new_mark_xid := null;
  elsif mark_xid is not null and oldest > mark_xid then
    -- The mark's writers had all finished before this delete, which moved what they committed.
    new_bound := greatest(bound, mark + 1);
    new_mark := null;
    new_mark_xid := null;
  end if;
  if new_mark is null and drawn >= new_bound then
    new_mark := drawn;
    new_mark_xid := me;
  end if;
  if n = 0 and new_bound = bound and new_mark is not distinct from mark then
    -- Another publisher moved everything first: nothing written.
    perform set_config('synchronous_commit', 'off', true);
    return last;
  end if;
  update events_counter
    set value = last + n, pending_from = new_bound, pending_mark = new_mark, pending_mark_xid = new_mark_xid;
  -- Numbers a reader may see survive a crash; a bound or a mark alone may be lost (it is only raised later).
  perform set_config('synchronous_commit', case when n > 0 then 'on' else 'off' end, true);
  return last + n;
end`;

/** 20261126T0200's function (frozen copy), for `down`. */
const PUBLISH_UNBOUNDED = `
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
  // 0: below every stmt (the sequence starts at 1), so the first publish reads what is pending whole.
  await sql`alter table events_counter
    add column pending_from bigint not null default 0,
    add column pending_mark bigint,
    add column pending_mark_xid xid8`.execute(db);
  await sql`create or replace function events_publish() returns bigint language plpgsql volatile
    set enable_seqscan = off set jit = off as ${sql.raw(`$$${PUBLISH}$$`)}`.execute(db);
  // The users index's catch-up reads the pending user events (index-feed.ts): from the bound too. STABLE:
  // it runs in its caller's snapshot (the catch-up reads published and pending events in one).
  await sql`create function events_pending_rows() returns setof events_pending language sql stable
    set enable_seqscan = off set jit = off as
    $$ select p.* from events_pending p where p.stmt >= (select c.pending_from from events_counter c) $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop function events_pending_rows()`.execute(db);
  // Drop and create: `create or replace` would keep the SET clause.
  await sql`drop function events_publish()`.execute(db);
  await sql`create function events_publish() returns bigint language plpgsql volatile as ${sql.raw(`$$${PUBLISH_UNBOUNDED}$$`)}`.execute(db);
  await sql`alter table events_counter drop column pending_from, drop column pending_mark, drop column pending_mark_xid`.execute(db);
}
