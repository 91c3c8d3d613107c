import { randomBytes } from 'node:crypto';
import { pgbouncerTracksPreparedStatements, startPgBouncer, startPrimary, teardownAll } from './cluster.js';

// The server the conformance projects run on: a primary of its own (not the shared test server) and
// PgBouncer in transaction mode in front of it. test/database.ts, seeing TEST_PGBOUNCER_URL, gives
// each app a database of its own on the primary, migrates it there directly and hands the app a URL
// through PgBouncer. The tests in test/scale/ start their own clusters.

export default async function setup() {
  process.env.MC_TEST_RUN = randomBytes(4).toString('hex');
  try {
    const primary = await startPrimary();
    const bouncer = await startPgBouncer(primary, pgbouncerTracksPreparedStatements() ? { max_prepared_statements: 200 } : {});
    process.env.TEST_DATABASE_URL = primary.url();
    process.env.TEST_PGBOUNCER_URL = bouncer.url('postgres');
  } catch (err) {
    teardownAll();
    throw err;
  }
  return () => teardownAll();
}
