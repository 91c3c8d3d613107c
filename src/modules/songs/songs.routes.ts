import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import type { Db } from '../../db/database.js';
import { artistExists } from '../artists/artists.repository.js';
import { AlbumParams } from '../albums/albums.schemas.js';
import { findAlbumOfArtist } from '../albums/albums.repository.js';
import { AlbumWithSongs, CreateSongBody, Song } from './songs.schemas.js';
import { insertSong, listSongsOfAlbum, insertSongsOf } from './songs.repository.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';
import { songsCollection } from './songs.collection.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';

const tags = ['songs'];

/** The album under its artist, or the 404 that names what is missing. */
async function requireAlbum(db: Db, artistId: number, albumId: number) {
  const album = await findAlbumOfArtist(db, artistId, albumId);
  if (album) return album;
  throw notFound((await artistExists(db, artistId)) ? 'Album' : 'Artist');
}

export const songRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artists/:artist_id/albums/:album_id/songs', {
    config: { scope: 'write', idempotent: true },
    schema: {
      tags,
      operationId: 'createSong',
      summary: 'Create a song on an album',
      description: 'Stores a new song on the album. 404 names what is missing: the artist, or the album under that artist.',
      params: AlbumParams,
      body: bulkBody(CreateSongBody),
      response: { 201: bulkCreated(Type.Ref(Song), 'The created song; `Location` is its path.'), ...errors(400, ...AUTH_ERRORS, 404, 413, 415) },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id } = request.params;
      await requireAlbum(app.db, artist_id, album_id);
      const body = request.body;
      let song;
      try {
        if (Array.isArray(body)) return reply.code(201).send(await insertSongsOf(app.db, album_id, body));
        song = await insertSong(app.db, album_id, body);
      } catch (err) {
        if (isForeignKeyViolation(err)) throw notFound('Album'); // deleted meanwhile
        throw err;
      }
      reply.code(201).header('Location', `/artists/${artist_id}/albums/${album_id}/songs/${song.id}`);
      return song;
    },
  });

  app.get('/artists/:artist_id/albums/:album_id/songs', {
    config: { scope: 'read', cached: ['artists', 'albums', 'songs'] },
    schema: {
      tags,
      operationId: 'getAlbumSongs',
      summary: 'Get an album with its songs',
      description:
        'The `songs` array follows the collection conventions: filter by exact name, name prefix (name_starts_with), full text (q) or duration (longer_than, shorter_than); sort; paginate.',
      params: AlbumParams,
      querystring: listQuerystring(songsCollection),
      response: {
        200: Type.Ref(AlbumWithSongs, { description: 'The album; X-Total-Count and Link describe its songs.', headers: LIST_HEADERS }),
        ...errors(400, ...AUTH_ERRORS, 404),
      },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id } = request.params;
      const plan = listQuery(songsCollection, request.url);
      const album = await requireAlbum(app.db, artist_id, album_id);
      const { rows, total } = await listSongsOfAlbum(app.db, album.id, plan);
      setListHeaders(reply, `/artists/${artist_id}/albums/${album.id}/songs`, plan, total);
      return { name: album.name, year: album.year, image: album.image, songs: rows };
    },
  });
};
