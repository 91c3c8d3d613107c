import { randomBytes } from 'node:crypto';
import { startPgBouncer, startPrimary, teardownAll } from './cluster.js';
import { pgbouncerTracksPreparedStatements } from './pgbouncer-version.js';

// The server the conformance projects run on: a primary of its own (not the shared test server) and
// PgBouncer in transaction mode in front of it. test/database.ts, seeing TEST_PGBOUNCER_URL, gives
// each app a database of its own on the primary, migrates it there directly and hands the app a URL
// through PgBouncer. The failover tests in test/scale/ start clusters of their own.

async function start(): Promise<void> {
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
}

// Every project of the run calls this (projects inherit globalSetup, each loading this file anew):
// the first call starts the servers, the others share them, the last teardown stops them, with the
// teardown of the module copy that started them.
const shared = globalThis as { mcScaleServers?: { users: number; ready: Promise<void>; stop: () => void } };

export default async function setup() {
  shared.mcScaleServers ??= { users: 0, ready: start(), stop: teardownAll };
  const servers = shared.mcScaleServers;
  servers.users += 1;
  await servers.ready;
  return () => {
    servers.users -= 1;
    if (servers.users > 0) return;
    shared.mcScaleServers = undefined;
    servers.stop();
  };
}
