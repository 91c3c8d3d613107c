import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { eventJson, readEvents, readPublished } from '../modules/events/events.repository.js';
import { EVENT_TYPES } from '../modules/events/events.schemas.js';
import { UsageError, intOption, parseOptions, write, type Command } from './command.js';
import { withDatabase } from './database.js';

const PAGE = 5000;

export const eventsCommand: Command = {
  summary: 'Export the events feed as NDJSON (stdout or --file).',
  usage: `music-catalogue events [--after SEQUENCE] [--types TYPE,...] [--file PATH]

Write the recorded events in sequence order, one JSON object a line, as GET /events returns them:
  {"id":"...","sequence":1,"type":"artist.created","path":"/artists/1","resource":{...},"at":"..."}
Events older than EVENTS_RETENTION_DAYS have been deleted by the service; export before if you
need them kept.

Options:
  --after SEQUENCE   only events after this sequence (default 0: all kept)
  --types LIST       only these types, comma-separated (${EVENT_TYPES.slice(0, 3).join(', ')}, ...)
  --file PATH        write to PATH instead of standard output

Uses DATABASE_URL (migrating it first).`,
  async run(args, ctx) {
    const { values } = parseOptions(args, { after: { type: 'string' }, types: { type: 'string' }, file: { type: 'string' } });
    const after = intOption(values.after, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
    const types = values.types === undefined ? null : values.types.split(',');
    const unknown = types?.filter((t) => !EVENT_TYPES.includes(t)) ?? [];
    if (unknown.length > 0) throw new UsageError(`--types: unknown event type ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`);
    return withDatabase(ctx, async ({ db }) => {
      const out = values.file ? createWriteStream(values.file) : ctx.stdout;
      let count = 0;
      for (let cursor = after; ;) {
        // The first page publishes what committed before the export began (PostgreSQL).
        const rows = await (cursor === after ? readEvents : readPublished)(db, cursor, PAGE, types);
        if (rows.length === 0) break;
        if (!out.write(rows.map((r) => `${eventJson(r)}\n`).join(''))) await once(out, 'drain');
        count += rows.length;
        cursor = rows[rows.length - 1]!.sequence;
      }
      if (values.file) {
        out.end();
        await finished(out);
        write(ctx.stderr, `exported ${count} events to ${values.file}`);
      }
      return 0;
    });
  },
};
