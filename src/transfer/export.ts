import { once } from 'node:events';
import type { Db } from '../db/database.js';

const PAGE = 1000;

async function writeText(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/**
 * Writes the whole catalogue as NDJSON: every artist, then every album, then every song, each in id
 * order, read page by page (keyset on id) so memory stays flat. Returns the count of each.
 */
export async function exportCatalogue(db: Db, out: NodeJS.WritableStream): Promise<Record<'artist' | 'album' | 'song', number>> {
  const counts = { artist: 0, album: 0, song: 0 };
  for (let after = 0; ;) {
    const rows = await db.selectFrom('artists').select(['id', 'name', 'image']).where('id', '>', after).orderBy('id').limit(PAGE).execute();
    if (!rows.length) break;
    await writeText(out, rows.map((r) => `${JSON.stringify({ type: 'artist', id: r.id, name: r.name, image: r.image })}\n`).join(''));
    counts.artist += rows.length;
    after = rows[rows.length - 1]!.id;
  }
  for (let after = 0; ;) {
    const rows = await db.selectFrom('albums').select(['id', 'artist_id', 'name', 'year', 'image']).where('id', '>', after).orderBy('id').limit(PAGE).execute();
    if (!rows.length) break;
    await writeText(
      out,
      rows.map((r) => `${JSON.stringify({ type: 'album', id: r.id, artist_id: r.artist_id, name: r.name, year: r.year, image: r.image })}\n`).join(''),
    );
    counts.album += rows.length;
    after = rows[rows.length - 1]!.id;
  }
  for (let after = 0; ;) {
    const rows = await db.selectFrom('songs').select(['id', 'album_id', 'name', 'time']).where('id', '>', after).orderBy('id').limit(PAGE).execute();
    if (!rows.length) break;
    await writeText(out, rows.map((r) => `${JSON.stringify({ type: 'song', id: r.id, album_id: r.album_id, name: r.name, time: r.time })}\n`).join(''));
    counts.song += rows.length;
    after = rows[rows.length - 1]!.id;
  }
  return counts;
}
