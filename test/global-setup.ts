import { randomBytes } from 'node:crypto';
import pg from 'pg';

// PostgreSQL test schemas are dropped once, after the whole run, not by each test file as it ends.
// A DROP SCHEMA while another file's app migrates breaks that migration: Kysely's Migrator lists the
// tables of every schema, naming each schema by name (pg_get_serial_sequence, has_schema_privilege),
// so a schema dropped between its scan and those calls fails it with 'schema "..." does not exist'.
// Each schema of this run carries the run's id (test/database.ts), so the teardown drops exactly
// this run's schemas and never another run's.

/** Said once per run without a PostgreSQL server (vitest.config.ts then has no postgres project; in CI it refuses to start). */
export const POSTGRES_SKIPPED =
  'PostgreSQL: SKIPPED, every test ran on SQLite only (TEST_DATABASE_URL is not set; with it, each test file runs on PostgreSQL too)';

/** Across the module instances each project loads this file as (one process). */
const SAID = Symbol.for('music-catalogue.test.postgres-skip-said');
const said = globalThis as { [SAID]?: true };

export default function setup() {
  const run = randomBytes(4).toString('hex');
  process.env.MC_TEST_RUN = run;
  return async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) {
      // After the summary, where whoever ran `npm test` reads whether it passed; once, though every
      // project (and the root) runs this teardown.
      if (!said[SAID]) console.warn(`\n${POSTGRES_SKIPPED}\n`);
      said[SAID] = true;
      return;
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(`select nspname as name from pg_namespace where nspname like $1`, [`mc_test_${run}_%`]);
      for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
    } finally {
      await client.end();
    }
  };
}
