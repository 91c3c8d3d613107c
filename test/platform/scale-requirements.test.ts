import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/scale-requirements.mjs', import.meta.url));

describe('npm run test:scale on a machine without PgBouncer or PostgreSQL server programs', () => {
  it('says in one line per program what to install, without a stack, and fails', () => {
    // /usr/sbin (where Debian puts pgbouncer) left out of PATH; MC_PG_BIN pointing nowhere.
    const res = spawnSync(process.execPath, [SCRIPT], { env: { PATH: '/nonexistent-bin', MC_PG_BIN: '/nonexistent-pg-bin' }, encoding: 'utf8' });
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines).toContain(
      'npm run test:scale: pgbouncer was not found on PATH: install PgBouncer (Debian/Ubuntu: apt-get install pgbouncer; other systems: https://www.pgbouncer.org/install.html)',
    );
    expect(lines).toContain(
      "npm run test:scale: initdb is not in /nonexistent-pg-bin (MC_PG_BIN): install PostgreSQL's server programs (Debian/Ubuntu: apt-get install postgresql-15) or set MC_PG_BIN to their directory",
    );
    expect(lines.every((line) => line.startsWith('npm run test:scale: '))).toBe(true);
  });
});
