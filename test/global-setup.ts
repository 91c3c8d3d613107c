import { randomBytes } from 'node:crypto';
import pg from 'pg';

// PostgreSQL test schemas are dropped once, after the whole run, not by each test file as it ends.
// A DROP SCHEMA while another file's app migrates breaks that migration: Kysely's Migrator lists the
// tables of every schema, naming each schema by name (pg_get_serial_sequence, has_schema_privilege),
// so a schema dropped between its scan and those calls fails it with 'schema "..." does not exist'.
// Each schema of this run carries the run's id (test/database.ts), so the teardown drops exactly
// this run's schemas and never another run's.

export default function setup() {
  const run = randomBytes(4).toString('hex');
  process.env.MC_TEST_RUN = run;
  return async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) return;
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
