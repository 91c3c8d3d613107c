import type { Db } from '../../db/database.js';
import type { CreateSongBody, Song } from './songs.schemas.js';

export async function insertSong(db: Db, albumId: number, data: CreateSongBody): Promise<Song> {
  return db
    .insertInto('songs')
    .values({ album_id: albumId, name: data.name.trim(), time: data.time })
    .returning(['id', 'name', 'time'])
    .executeTakeFirstOrThrow();
}

export async function listSongsOfAlbum(db: Db, albumId: number): Promise<Song[]> {
  return db.selectFrom('songs').select(['id', 'name', 'time']).where('album_id', '=', albumId).orderBy('id').execute();
}
