import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { seed } from '../../src/cli/seed.js';
import { cliIo } from '../cli/io.js';

// A bulk load (seed, import) writes every row's event unnumbered into events_pending. Left there, the
// service's first publish deleted them all: on the bench's million users that left a 540 MB heap of
// dead pages, which every publish's `delete from events_pending` then read whole (180-260 ms a publish,
// so every users list after a write waited that long); plain VACUUM cannot shrink the heap while
// publishes and reads hold the table. So the load publishes them itself before it refreshes the
// statistics (refreshStatistics, db/indexes.ts), and rewrites events_pending (VACUUM FULL) to its
// live rows: none.

const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `mc_seed_upkeep_${process.pid}`;
const url = base.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);

describe('seed on PostgreSQL leaves its events published and events_pending empty', () => {
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
  });
  afterAll(async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it('publishes the events of the load and leaves no pages behind them', async () => {
    const io = cliIo({ databaseUrl: url });
    expect(await seed.run(['--users', '3000', '--artists', '20', '--albums-per-artist', '2', '--songs-per-album', '3'], io.ctx)).toBe(0);
    // No service ran: what is published, the seed published.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const pending = await db.query<{ n: string; pages: string }>(
        `select (select count(*) from events_pending) as n, pg_relation_size('events_pending') / current_setting('block_size')::int as pages`,
      );
      expect(pending.rows[0]).toEqual({ n: '0', pages: '0' });
      const events = await db.query<{ n: string; users: string }>(`select count(*) as n, count(*) filter (where path like '/users/%') as users from events`);
      expect(Number(events.rows[0]!.users)).toBeGreaterThanOrEqual(3000);
    } finally {
      await db.end();
    }
  });
});
