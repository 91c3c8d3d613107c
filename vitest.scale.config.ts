import { defineConfig } from 'vitest/config';
import { pgbouncerTracksPreparedStatements } from './test/scale/pgbouncer-version.js';

// `npm run test:scale`: the service behind PgBouncer, on a primary with a streaming standby, with
// several instances (docs/scaling.md). Needs PostgreSQL's server binaries (initdb, pg_ctl,
// pg_basebackup: MC_PG_BIN, default /usr/lib/postgresql/15/bin) and pgbouncer; everything runs on
// loopback in temporary directories, started and torn down by the run (test/scale/cluster.ts).

// The conformance of the service, run through PgBouncer in transaction mode.
const conformance = [
  'test/modules/**/*.test.ts',
  'test/http/idempotency.test.ts',
  'test/http/conditional.test.ts',
  'test/query/catalogue-lists.test.ts',
  'test/query/users-list.test.ts',
  'test/auth/auth.test.ts',
];

const through = (name: string, prepared: 'on' | 'off') => ({
  extends: true as const,
  test: { name, include: conformance, env: { TEST_BACKEND: 'postgres', TEST_PG_PREPARED_STATEMENTS: prepared } },
});

export default defineConfig({
  test: {
    pool: 'forks',
    globalSetup: ['test/scale/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    projects: [
      through('pgbouncer', 'off'),
      // Named statements through PgBouncer need it to track them (1.21+, max_prepared_statements).
      ...(pgbouncerTracksPreparedStatements() ? [through('pgbouncer-prepared', 'on')] : []),
      { extends: true, test: { name: 'scale', include: ['test/scale/**/*.test.ts'], env: { TEST_BACKEND: 'postgres' } } },
    ],
  },
});
