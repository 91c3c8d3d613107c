import { refreshStatistics } from '../db/indexes.js';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { progressBar } from './progress.js';
import { createInterface } from 'node:readline';
import { importCatalogue } from '../transfer/import.js';
import { UsageError, parseOptions, write, type Command } from './command.js';
import { withDatabase } from './database.js';

export const importCommand: Command = {
  summary: 'Read an NDJSON catalogue (from export) into the database, all or nothing.',
  usage: `music-catalogue import [--file PATH]

Read NDJSON records as written by music-catalogue export, from PATH or standard input.
Every record is validated with the API's own rules (plus ids and references); each bad line is
reported with its number. Only a file without a single problem is imported, in one transaction.
Ids are kept, so references between records stay intact; an id that already exists is an error.

Options:
  --file PATH   read from PATH instead of standard input (with a progress bar on a terminal)

Uses DATABASE_URL (migrating it first).`,
  async run(args, ctx) {
    const { values } = parseOptions(args, { file: { type: 'string' } });
    const input = values.file ? createReadStream(values.file) : ctx.stdin;
    if (!input) throw new UsageError('no input: give --file PATH or pipe NDJSON to standard input');
    // On a terminal, a bar of the file read so far (stdin has no known size): stderr, stdout stays for the summary.
    const stderr = ctx.stderr;
    if (values.file && stderr.isTTY) {
      const progress = progressBar(stderr, 'reading', (await stat(values.file)).size);
      const file: NodeJS.ReadableStream = input;
      file.on('data', (chunk: Buffer | string) => progress.advance(chunk.length));
      file.once('end', () => progress.done());
    }
    return withDatabase(ctx, async ({ db }) => {
      const result = await importCatalogue(db, createInterface({ input, crlfDelay: Infinity }));
      if (!result.ok) {
        for (const p of result.problems) write(ctx.stderr, `line ${p.line}: ${p.message}`);
        const lines = new Set(result.problems.map((p) => p.line)).size;
        write(ctx.stderr, `import failed: ${lines} bad line${lines === 1 ? '' : 's'}; nothing was imported`);
        return 1;
      }
      const c = result.counts;
      await refreshStatistics(db); // fresh planner statistics after a bulk load, as seed does
      write(ctx.stdout, `imported ${c.artist} artists, ${c.album} albums, ${c.song} songs`);
      return 0;
    });
  },
};
