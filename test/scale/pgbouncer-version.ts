import { spawnSync } from 'node:child_process';

// Which PgBouncer is installed, without starting anything (vitest.scale.config.ts reads it to decide
// which projects to run).

export function pgbouncerVersion(): [number, number] {
  const out = spawnSync('pgbouncer', ['--version'], { encoding: 'utf8' }).stdout ?? '';
  const m = /PgBouncer (\d+)\.(\d+)/.exec(out);
  if (!m) throw new Error(`pgbouncer --version said: ${out}`);
  return [Number(m[1]), Number(m[2])];
}

/** PgBouncer 1.21 and later track protocol-level prepared statements in transaction mode. */
export function pgbouncerTracksPreparedStatements(): boolean {
  const [major, minor] = pgbouncerVersion();
  return major > 1 || minor >= 21;
}
