import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';
import { childrenOf, type EmbedSpec } from '../../query/embed.js';
import type { Song } from '../songs/songs.schemas.js';
import { SONGS } from '../songs/songs.table.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';
import { addVersionedRoutes, existing, withoutVersion, type VersionedResource } from '../versioned-resource.js';
import { ArtistParams } from '../artists/artists.schemas.js';
import { artistPath, getArtist } from '../artists/artists.repository.js';
import { Album, AlbumParams, ArtistWithAlbums, CreateAlbumBody, UpdateAlbumBody, type AlbumKey } from './albums.schemas.js';
import { albumPath, createAlbum, createAlbums, getAlbum, listAlbums, updateAlbum, type VersionedAlbum } from './albums.repository.js';
import { albumsCollection } from './albums.collection.js';

const tags = ['albums'];
const SONGS_OF_ALBUM: EmbedSpec = { table: SONGS.table, parent: SONGS.parent, columns: SONGS.fields };

/** One album: read it, edit it, remove it with its songs. ETags come from the row version. */
const albumResource: VersionedResource<AlbumKey, VersionedAlbum, UpdateAlbumBody> = {
  url: '/artists/:artist_id/albums/:album_id',
  params: AlbumParams,
  tags,
  etagKind: 'album',
  writeScope: 'write',
  path: albumPath,
  id: (at) => at.album_id,
  get: getAlbum,
  update: updateAlbum,
  view: withoutVersion,
  read: { scope: 'read', summary: 'Get an album', response: Type.Ref(Album) },
  edit: {
    summary: 'Update an album',
    description: 'Partial update: send any of name, year, image (same rules as on create).',
    body: UpdateAlbumBody,
    response: Type.Ref(Album),
  },
  delete: { summary: 'Delete an album with its songs' },
};

export const albumRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artists/:artist_id/albums', {
    config: { scope: 'write', idempotent: true, references: 'Artist' },
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
      const { params, body } = request;
      if (Array.isArray(body)) return reply.created((db) => createAlbums(db, params, body));
      return reply.created(
        (db) => createAlbum(db, params, body),
        (album) => `/artists/${params.artist_id}/albums/${album.id}`,
      );
    },
  });

  app.get('/artists/:artist_id/albums', {
    config: { scope: 'read', cached: true },
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
      const artist = await existing(app.db, await getArtist(app.db, request.params), artistPath(request.params));
      const { rows, ...found } = await listAlbums(app.db, request.params, plan);
      setListHeaders(reply, `/artists/${artist.id}/albums`, plan, found);
      if (plan.request.embed !== 'songs') return { name: artist.name, image: artist.image, albums: rows };
      const songs = await childrenOf<Song>(
        app.db as never,
        SONGS_OF_ALBUM,
        rows.map((album) => album.id),
      );
      return { name: artist.name, image: artist.image, albums: rows.map((album) => ({ ...album, songs: songs.get(album.id) ?? [] })) };
    },
  });

  addVersionedRoutes(app, albumResource);
};
