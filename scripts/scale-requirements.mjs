// `npm run test:scale` starts its own PostgreSQL clusters (initdb, pg_basebackup from MC_PG_BIN) and
// puts PgBouncer in front of them. Checked before vitest starts, so a machine without them gets one
// line per missing program saying what to install, not a stack from the harness.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const pgBin = process.env.MC_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const missing = [];
for (const program of ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres']) {
  if (!existsSync(join(pgBin, program))) {
    missing.push(
      `${program} is not in ${pgBin} (MC_PG_BIN): install PostgreSQL's server programs (Debian/Ubuntu: apt-get install postgresql-15) or set MC_PG_BIN to their directory`,
    );
  }
}
const bouncer = spawnSync('pgbouncer', ['--version'], { encoding: 'utf8' });
if (bouncer.error || !/PgBouncer \d+\.\d+/.test(bouncer.stdout ?? '')) {
  const why = bouncer.error
    ? ((bouncer.error.code === 'ENOENT' ? 'was not found on PATH' : bouncer.error.code) ?? bouncer.error.message)
    : 'printed no version for --version';
  missing.push(`pgbouncer ${why}: install PgBouncer (Debian/Ubuntu: apt-get install pgbouncer; other systems: https://www.pgbouncer.org/install.html)`);
}
if (missing.length) {
  for (const line of missing) process.stderr.write(`npm run test:scale: ${line}\n`);
  process.exit(1);
}
