import type { Db } from '../../db/database.js';
import { inInsertOrder } from '../../http/bulk.js';
import { param, precompiled } from '../../db/precompiled.js';
import { listPage, type ListPlan } from '../../query/index.js';
import type { CreateSongBody, Song } from './songs.schemas.js';

/** INSERT of n songs, each row binding the same names (one write's values per row). */
const insertSongs = (db: Db, n: number) =>
  db
    .insertInto('songs')
    .values(Array.from({ length: n }, () => ({ album_id: param<number>('albumId'), name: param<string>('name'), time: param<string>('time') })))
    .returning(['id', 'name', 'time']);

const songInsert = precompiled<Song, { albumId: number; name: string; time: string }>((db) => insertSongs(db, 1), { groupCommit: { rows: insertSongs } });

/** POST a song is the hot write path: one precompiled statement, committed with concurrent ones (as one statement). */
export async function insertSong(db: Db, albumId: number, data: CreateSongBody): Promise<Song> {
  const song = await songInsert.first(db, { albumId, name: data.name.trim(), time: data.time });
  if (!song) throw new Error('INSERT ... RETURNING returned no row');
  return song;
}

/** Several songs of the album in one INSERT (all or none), in the order sent; not batched with other writes. */
export async function insertSongsOf(db: Db, albumId: number, items: CreateSongBody[]): Promise<Song[]> {
  const rows = await db
    .insertInto('songs')
    .values(items.map((data) => ({ album_id: albumId, name: data.name.trim(), time: data.time })))
    .returning(['id', 'name', 'time'])
    .execute();
  return inInsertOrder(rows);
}

/** One page of an album's songs and the total the filters select. */
export async function listSongsOfAlbum(db: Db, albumId: number, plan: ListPlan): Promise<{ rows: Song[]; total: number }> {
  const base = () => db.selectFrom('songs').where('album_id', '=', param<number>('albumId'));
  return listPage(db, { key: 'songs-of-album', table: 'songs', values: { albumId }, base, rows: () => base().select(['id', 'name', 'time']) }, plan);
}
