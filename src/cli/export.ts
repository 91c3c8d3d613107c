import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { exportCatalogue } from '../transfer/export.js';
import { parseOptions, write, type Command } from './command.js';
import { withDatabase } from './database.js';

export const exportCommand: Command = {
  summary: 'Write the whole catalogue as NDJSON (stdout or --file).',
  usage: `music-catalogue export [--file PATH]

Write every artist, album and song as NDJSON, one record per line:
  {"type":"artist","id":1,"name":"...","image":"https://..."}
  {"type":"album","id":1,"artist_id":1,"name":"...","year":1997,"image":"https://..."}
  {"type":"song","id":1,"album_id":1,"name":"...","time":"04:44"}
The output can be read back with music-catalogue import.

Options:
  --file PATH   write to PATH instead of standard output

Uses DATABASE_URL (migrating it first).`,
  async run(args, ctx) {
    const { values } = parseOptions(args, { file: { type: 'string' } });
    return withDatabase(ctx, async ({ db }) => {
      if (!values.file) {
        await exportCatalogue(db, ctx.stdout);
        return 0;
      }
      const out = createWriteStream(values.file);
      const counts = await exportCatalogue(db, out);
      out.end();
      await finished(out);
      write(ctx.stderr, `exported ${counts.artist} artists, ${counts.album} albums, ${counts.song} songs to ${values.file}`);
      return 0;
    });
  },
};
