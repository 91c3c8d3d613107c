import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { ArtistParams } from '../artists/artists.schemas.js';
import { findArtist } from '../artists/artists.repository.js';
import { Album, ArtistWithAlbums, CreateAlbumBody } from './albums.schemas.js';
import { insertAlbum, insertAlbums, listAlbumsOfArtist } from './albums.repository.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';
import { albumsCollection } from './albums.collection.js';
import { childrenOf, type EmbedSpec } from '../../query/embed.js';
import type { Song } from '../songs/songs.schemas.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';

const tags = ['albums'];
const SONGS_OF_ALBUM: EmbedSpec = { table: 'songs', parent: 'album_id', columns: ['id', 'name', 'time'] };

export const albumRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artists/:artist_id/albums', {
    config: { scope: 'write', idempotent: true },
    schema: {
      tags,
      operationId: 'createAlbum',
      summary: 'Create an album of an artist',
      description: 'Stores a new album under the artist. 404 when the artist does not exist.',
      params: ArtistParams,
      body: bulkBody(CreateAlbumBody),
      response: { 201: bulkCreated(Type.Ref(Album), 'The created album; `Location` is its path.'), ...errors(400, ...AUTH_ERRORS, 404, 413, 415) },
    },
    handler: async (request, reply) => {
      const { artist_id } = request.params;
      const body = request.body;
      let album;
      try {
        if (Array.isArray(body)) return reply.code(201).send(await insertAlbums(app.db, artist_id, body));
        album = await insertAlbum(app.db, artist_id, body);
      } catch (err) {
        if (isForeignKeyViolation(err)) throw notFound('Artist');
        throw err;
      }
      reply.code(201).header('Location', `/artists/${artist_id}/albums/${album.id}`);
      return album;
    },
  });

  app.get('/artists/:artist_id/albums', {
    config: { scope: 'read', cached: ['artists', 'albums'] },
    schema: {
      tags,
      operationId: 'getArtistAlbums',
      summary: 'Get an artist with its albums',
      description:
        'With embed=songs each album carries its first songs. The `albums` array follows the collection conventions: filter by exact name, name prefix (name_starts_with), full text (q), year or year range (released_after, released_before); sort; paginate.',
      params: ArtistParams,
      querystring: listQuerystring(albumsCollection),
      response: {
        200: Type.Ref(ArtistWithAlbums, { description: 'The artist; X-Total-Count and Link describe its albums.', headers: LIST_HEADERS }),
        ...errors(400, ...AUTH_ERRORS, 404),
      },
    },
    handler: async (request, reply) => {
      const plan = listQuery(albumsCollection, request.url);
      const artist = await findArtist(app.db, request.params.artist_id);
      if (!artist) throw notFound('Artist');
      const { rows, total } = await listAlbumsOfArtist(app.db, artist.id, plan);
      setListHeaders(reply, `/artists/${artist.id}/albums`, plan, total);
      if (plan.request.embed !== 'songs') return { name: artist.name, image: artist.image, albums: rows };
      const songs = await childrenOf<Song>(
        app.db as never,
        SONGS_OF_ALBUM,
        rows.map((album) => album.id),
      );
      return { name: artist.name, image: artist.image, albums: rows.map((album) => ({ ...album, songs: songs.get(album.id) ?? [] })) };
    },
  });
};
