import { once } from 'node:events';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { ARTISTS } from '../modules/artists/artists.table.js';
import { ALBUMS } from '../modules/albums/albums.table.js';
import { SONGS } from '../modules/songs/songs.table.js';

const PAGE = 1000;

/** What export writes, parents first: each record is `{type, id, <parent id>, ...the other fields}` of its table module. */
const EXPORTED = [ARTISTS, ALBUMS, SONGS] as const;

type RecordType = (typeof EXPORTED)[number]['event']['type'];

async function writeText(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/**
 * Writes the whole catalogue as NDJSON: every artist, then every album, then every song, each in id
 * order, read page by page (keyset on id) so memory stays flat. Returns the count of each.
 */
export async function exportCatalogue(db: Db, out: NodeJS.WritableStream): Promise<Record<RecordType, number>> {
  const counts = { artist: 0, album: 0, song: 0 };
  for (const def of EXPORTED) {
    const parent = 'parent' in def ? [def.parent] : [];
    // The id first, then the parent's, then the resource's other fields (import reads them by name).
    const columns = ['id', ...parent, ...def.fields.filter((f) => f !== 'id')];
    const select = sql.join(columns.map((c) => sql.ref(c)));
    for (let after = 0; ;) {
      const { rows } = await sql<{ id: number }>`select ${select} from ${sql.table(def.table)} where id > ${after} order by id limit ${PAGE}`.execute(db);
      if (!rows.length) break;
      await writeText(out, rows.map((r) => `${JSON.stringify({ type: def.event.type, ...r })}\n`).join(''));
      counts[def.event.type] += rows.length;
      after = rows[rows.length - 1]!.id;
    }
  }
  return counts;
}
