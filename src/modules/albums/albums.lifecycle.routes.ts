import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { conditionalWrite, ifMatch, resourceEtag } from '../../http/etag.js';
import { Album, AlbumParams, UpdateAlbumBody } from './albums.schemas.js';
import { deleteAlbum, getAlbum, missingAlbumKind, updateAlbum } from './albums.lifecycle.repository.js';

const tags = ['albums'];

/** One album: read it, edit it, remove it with its songs. ETags come from the row version. */
export const albumLifecycleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/artists/:artist_id/albums/:album_id', {
    config: { scope: 'read', cached: ['artists', 'albums', 'songs'] },
    schema: {
      tags,
      summary: 'Get an album',
      params: AlbumParams,
      response: { 200: Type.Ref(Album), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id } = request.params;
      const album = await getAlbum(app.db, artist_id, album_id);
      if (!album) throw notFound((await missingAlbumKind(app.db, artist_id, album_id)) ?? 'Album');
      reply.header('ETag', resourceEtag('album', album.id, album.version));
      return { id: album.id, name: album.name, year: album.year, image: album.image };
    },
  });

  app.patch('/artists/:artist_id/albums/:album_id', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Update an album',
      description: 'Partial update: send any of name, year, image (same rules as on create).',
      params: AlbumParams,
      body: UpdateAlbumBody,
      response: { 200: Type.Ref(Album), ...errors(400, ...AUTH_ERRORS, 404, 412, 413, 415) },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id } = request.params;
      const album = await conditionalWrite(
        ifMatch(request, 'album', album_id),
        (versions) => updateAlbum(app.db, artist_id, album_id, request.body, versions),
        () => missingAlbumKind(app.db, artist_id, album_id),
      );
      reply.header('ETag', resourceEtag('album', album.id, album.version));
      return { id: album.id, name: album.name, year: album.year, image: album.image };
    },
  });

  app.delete('/artists/:artist_id/albums/:album_id', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Delete an album with its songs',
      params: AlbumParams,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errors(400, ...AUTH_ERRORS, 404, 412) },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id } = request.params;
      await conditionalWrite(
        ifMatch(request, 'album', album_id),
        (versions) => deleteAlbum(app.db, artist_id, album_id, versions),
        () => missingAlbumKind(app.db, artist_id, album_id),
      );
      return reply.code(204).send(null);
    },
  });
};
