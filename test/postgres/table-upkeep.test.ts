import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { foldTick, tableUpkeep, type UpkeepState } from '../../src/db/summary-folder.js';

// The summary folder (src/db/summary-folder.ts) does on its turn what autovacuum would (it is off on
// this project's machines): table_version_slots, which every write updates, is vacuumed when writes
// came since the last vacuum, and `events` analyzed when never analyzed or changed past autovacuum's
// threshold. Synchronised on the folder's run: foldTick is called here (again if another folder held
// the turn) until its upkeep ran, as the shared state it was given shows.

type Stat = { n_dead_tup: string; n_tup_upd: string; vacuum_count: string; analyze_count: string; n_mod_since_analyze: string };

describe('the summary folder vacuums table_version_slots and analyzes events (PostgreSQL)', () => {
  let ctx: TestContext;
  let api: Client;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    ctx = await buildTestApp({ usersIndex: false });
    api = client(ctx.app, ctx.tokens.admin);
    db = ctx.app.db as unknown as Kysely<unknown>;
  });
  afterAll(() => ctx?.close());

  async function stat(table: string): Promise<Stat> {
    const { rows } = await sql<Stat>`select n_dead_tup, n_tup_upd, vacuum_count, analyze_count, n_mod_since_analyze from pg_stat_user_tables
      where relid = to_regclass(${table})`.execute(db);
    return rows[0]!;
  }
  /** One run of the folder with its upkeep (the turn taken again while another process's folder has it: a fold lasts milliseconds). */
  async function folderRun(state: UpkeepState): Promise<void> {
    state.slotWrites = undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      await foldTick(db, false, state);
      if (state.slotWrites !== undefined) return;
    }
    throw new Error('the folder never did its upkeep');
  }
  /**
   * Until the statistics show at least `atLeast` of `table`'s `counter` (n_tup_upd, n_tup_ins): each
   * backend reports its writes' counts when it next goes idle (within a second, later under load), and
   * a count reported after the folder's vacuum or analyze adds to what it left (dead rows; changes
   * since the analyze). Synchronised on the report, not on a wait.
   */
  async function reported(table: string, counter: 'n_tup_upd' | 'n_tup_ins', atLeast: number): Promise<void> {
    for (let attempt = 0; attempt < 1200; attempt++) {
      const { rows } = await sql<{ n: string }>`select ${sql.ref(counter)} as n from pg_stat_user_tables where relid = to_regclass(${table})`.execute(db);
      if (Number(rows[0]!.n) >= atLeast) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the statistics never reported ${atLeast} of ${table}'s ${counter}`);
  }
  const writes = async (n: number, tag: string) => {
    for (let i = 0; i < n; i++) {
      const res = await api.post('/artists', { name: `${tag} ${i}`, image: 'https://img.example.com/a.jpg' });
      expect(res.statusCode).toBe(201);
    }
  };

  it('after writes, the folder run leaves the slots vacuumed (dead rows bounded) and events analyzed', async () => {
    const before = Number((await stat('table_version_slots')).n_tup_upd);
    await writes(300, 'first');
    // Each POST updates one slot: every one of them reported before the folder's vacuum runs.
    await reported('table_version_slots', 'n_tup_upd', before + 300);
    // And every event those POSTs wrote is published (by any process: a settle pass, a reader) and
    // its insert reported before the folder's analyze; one reported after it would count as a change
    // since the analyze and make `events` due again. Events are only ever inserted: as many inserts
    // as the table holds.
    await sql`select events_publish()`.execute(db);
    const { rows: published } = await sql<{ n: string }>`select count(*) as n from events`.execute(db);
    await reported('events', 'n_tup_ins', Number(published[0]!.n));
    const state: UpkeepState = {};
    await folderRun(state);
    const slots = await stat('table_version_slots');
    expect(Number(slots.vacuum_count)).toBeGreaterThan(0);
    // What pruning left (and writes not yet reported to the statistics): under one dead row per slot.
    expect(Number(slots.n_dead_tup)).toBeLessThan(64);
    const events = await stat('events');
    expect(Number(events.analyze_count)).toBeGreaterThan(0);

    // Nothing written since: the upkeep has nothing to do.
    expect(await tableUpkeep(db, { ...state })).toEqual({ vacuumed: false, analyzed: false });
    // Written since: vacuumed again.
    await writes(20, 'second');
    expect((await tableUpkeep(db, { ...state })).vacuumed).toBe(true);
    expect(Number((await stat('table_version_slots')).vacuum_count)).toBeGreaterThan(Number(slots.vacuum_count));
  });
});
