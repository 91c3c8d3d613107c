import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { catalogueSeeder } from '../seed/catalogue.seeder.js';
import { usersSeeder } from '../seed/users.seeder.js';
import { intOption, parseOptions, write, type Command } from './command.js';
import { withDatabase } from './database.js';
import { progressBar } from './progress.js';
import type { Seeder } from '../seed/seeder.js';
import { refreshStatistics } from '../db/indexes.js';

async function nonEmptyTables(db: Db, tables: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const table of tables) {
    // Table names come from the seeders' own constant lists, never from input.
    const row = await sql<{ one: number }>`select 1 as one from ${sql.table(table)} limit 1`.execute(db);
    if (row.rows.length > 0) found.push(table);
  }
  return found;
}

export const seed: Command = {
  summary: 'Fill the database with deterministic demo data.',
  usage: `music-catalogue seed [options]

Insert deterministic demo data: the same options give the same data.

Options:
  --artists N             artists to create (default 100)
  --albums-per-artist N   albums per artist (default 5)
  --songs-per-album N     songs per album (default 10)
  --users N               users to create (default 1000)
  --seed N                random seed (default 1)
  --force                 add to a database that already has data (refused otherwise)

Inserts in batches, one transaction each. Progress and the closing summary go to standard error:
a progress bar on a terminal, otherwise a line at each tenth done.
Uses DATABASE_URL (migrating it first).`,
  async run(args, ctx) {
    const { values } = parseOptions(args, {
      artists: { type: 'string' },
      'albums-per-artist': { type: 'string' },
      'songs-per-album': { type: 'string' },
      users: { type: 'string' },
      seed: { type: 'string' },
      force: { type: 'boolean' },
    });
    const seedValue = intOption(values.seed, 'seed', 1, 0, 2 ** 32 - 1);
    const options = {
      seed: seedValue,
      artists: intOption(values.artists, 'artists', 100, 0, 10_000_000),
      albumsPerArtist: intOption(values['albums-per-artist'], 'albums-per-artist', 5, 0, 1000),
      songsPerAlbum: intOption(values['songs-per-album'], 'songs-per-album', 10, 0, 1000),
    };
    const users = { seed: seedValue, users: intOption(values.users, 'users', 1000, 0, 100_000_000) };
    // Each seeder draws from its own random stream: the catalogue is the same with or without users.
    const seeders = [
      { seeder: catalogueSeeder as Seeder<unknown>, options },
      { seeder: usersSeeder as Seeder<unknown>, options: users },
    ].filter(({ seeder, options: o }) => seeder.total(o) > 0);
    return withDatabase(ctx, async ({ db, sqlite }) => {
      // Bulk inserts into six users indexes touch pages all over the file: a 256 MiB page cache for this
      // one connection keeps them in memory between commits instead of re-reading them (SQLite only).
      sqlite?.pragma('cache_size = -262144');
      if (!values.force) {
        const busy = await nonEmptyTables(
          db,
          seeders.flatMap((s) => s.seeder.tables),
        );
        if (busy.length) {
          // Said with what is there: a database a tour or a person wrote to is a reason to ask, and the
          // answer (--force adds beside it, never deletes) is in the same line.
          write(
            ctx.stderr,
            `music-catalogue seed: the database already has data (${busy.join(', ')}); use --force to add the demo data beside it (nothing is deleted or changed)`,
          );
          return 1;
        }
      }
      const started = Date.now();
      let rows = 0;
      for (const { seeder, options: o } of seeders) {
        const total = seeder.total(o);
        const bar = progressBar(ctx.stderr, seeder.name, total);
        await seeder.run(db, o, bar);
        bar.done();
        rows += total;
      }
      // Fresh statistics for the query planner: after a bulk load its guesses pick the wrong index
      // (e.g. a country filter in id order sorted a whole age range instead of walking the country index).
      await refreshStatistics(db);
      write(ctx.stderr, `seeded ${rows} rows in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      return 0;
    });
  },
};
