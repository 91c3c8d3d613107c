import type { Db } from '../db/database.js';

/** How a long run says how far it is (the CLI draws it: cli/progress.ts). */
export interface Progress {
  advance(by: number): void;
  done(): void;
}

/**
 * One part of the demo data. `seed` runs every seeder in order; each draws from its own random
 * stream (derivedSeed(seed, name)), so adding a part never changes what another part produces.
 * The parts: catalogue.seeder.ts (`--artists N`) and users.seeder.ts (`--users N`), both inserting
 * in batches of ROWS_PER_STATEMENT.
 */
export interface Seeder<O> {
  name: string;
  /** Tables this seeder fills; seed refuses to run when any has rows, unless --force. */
  tables: readonly string[];
  /** Rows it will insert, for the progress bar. */
  total(options: O): number;
  run(db: Db, options: O & { seed: number }, progress: Progress): Promise<void>;
}

/** Rows per INSERT statement: far below SQLite's and PostgreSQL's parameter limits. */
export const ROWS_PER_STATEMENT = 500;

export function chunks<T>(rows: T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
