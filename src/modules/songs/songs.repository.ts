import type { Db } from '../../db/database.js';
import { applyToSelect, countRows, totalFromPage, type ListPlan } from '../../query/index.js';
import type { CreateSongBody, Song } from './songs.schemas.js';

export async function insertSong(db: Db, albumId: number, data: CreateSongBody): Promise<Song> {
  return db
    .insertInto('songs')
    .values({ album_id: albumId, name: data.name.trim(), time: data.time })
    .returning(['id', 'name', 'time'])
    .executeTakeFirstOrThrow();
}

/** One page of an album's songs and the total the filters select. */
export async function listSongsOfAlbum(db: Db, albumId: number, plan: ListPlan): Promise<{ rows: Song[]; total: number }> {
  const base = db.selectFrom('songs').where('album_id', '=', albumId);
  const rows = await applyToSelect(base.select(['id', 'name', 'time']), plan).execute();
  return { rows, total: totalFromPage(plan, rows.length) ?? (await countRows(db, base, plan)) };
}
