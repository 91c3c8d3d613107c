import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';
import { addVersionedRoutes, existing, withoutVersion, type VersionedResource } from '../versioned-resource.js';
import { AlbumParams } from '../albums/albums.schemas.js';
import { albumPath, getAlbum } from '../albums/albums.repository.js';
import { AlbumWithSongs, CreateSongBody, Song, SongParams, UpdateSongBody, type SongKey } from './songs.schemas.js';
import { createSong, createSongs, getSong, listSongs, songPath, updateSong, type VersionedSong } from './songs.repository.js';
import { songsCollection } from './songs.collection.js';

const tags = ['songs'];

/** One song: read it, edit it, remove it. ETags come from the row version. */
const songResource: VersionedResource<SongKey, VersionedSong, UpdateSongBody> = {
  url: '/artists/:artist_id/albums/:album_id/songs/:song_id',
  params: SongParams,
  tags,
  etagKind: 'song',
  writeScope: 'write',
  path: songPath,
  id: (at) => at.song_id,
  get: getSong,
  update: updateSong,
  view: withoutVersion,
  read: { scope: 'read', summary: 'Get a song', response: Type.Ref(Song) },
  edit: {
    summary: 'Update a song',
    description: 'Partial update: send any of name, time (same rules as on create).',
    body: UpdateSongBody,
    response: Type.Ref(Song),
  },
  delete: { summary: 'Delete a song' },
};

export const songRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artists/:artist_id/albums/:album_id/songs', {
    // The album deleted while the INSERT runs: its foreign key says so.
    config: { scope: 'write', idempotent: true, references: 'Album' },
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
      const { params, body } = request;
      if (Array.isArray(body)) {
        await existing(app.db, await getAlbum(app.db, params), albumPath(params));
        return reply.created((db) => createSongs(db, params, body));
      }
      // One song checks its album in its own INSERT (songs.repository.ts); no row: the 404 names what is missing.
      const song = await reply.created(
        (db) => createSong(db, params, body),
        (song) => `/artists/${params.artist_id}/albums/${params.album_id}/songs/${song.id}`,
      );
      return existing(app.db, song, albumPath(params));
    },
  });

  app.get('/artists/:artist_id/albums/:album_id/songs', {
    config: { scope: 'read', cached: true },
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
      // The page first: on PostgreSQL its statement reads the album too (null: none under the artist);
      // where it did not (SQLite, undefined), getAlbum reads it after.
      const { rows, album: read, ...found } = await listSongs(app.db, request.params, plan);
      const album = await existing(app.db, read === undefined ? await getAlbum(app.db, request.params) : (read ?? undefined), albumPath(request.params));
      setListHeaders(reply, `/artists/${artist_id}/albums/${album_id}/songs`, plan, found);
      return { name: album.name, year: album.year, image: album.image, songs: rows };
    },
  });

  addVersionedRoutes(app, songResource);
};
