import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { conditionalWrite, ifMatch, resourceEtag } from '../../http/etag.js';
import { Artist, ArtistParams, UpdateArtistBody } from './artists.schemas.js';
import { artistExists } from './artists.repository.js';
import { deleteArtist, updateArtist } from './artists.lifecycle.repository.js';

const tags = ['artists'];
const missingArtist = (exists: boolean) => (exists ? null : 'Artist');

/** Editing and removing an artist; If-Match makes either conditional on the ETag of GET /artists/{id}. */
export const artistLifecycleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.patch('/artists/:artist_id', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Update an artist',
      description: 'Partial update: send any of name, image (same rules as on create). Answers the whole artist.',
      params: ArtistParams,
      body: UpdateArtistBody,
      response: { 200: Type.Ref(Artist), ...errors(400, ...AUTH_ERRORS, 404, 412, 413, 415) },
    },
    handler: async (request, reply) => {
      const id = request.params.artist_id;
      const artist = await conditionalWrite(
        ifMatch(request, 'artist', id),
        (versions) => updateArtist(app.db, id, request.body, versions),
        async () => missingArtist(await artistExists(app.db, id)),
      );
      reply.header('ETag', resourceEtag('artist', artist.id, artist.version));
      return { id: artist.id, name: artist.name, image: artist.image };
    },
  });

  app.delete('/artists/:artist_id', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Delete an artist with its albums and their songs',
      params: ArtistParams,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errors(400, ...AUTH_ERRORS, 404, 412) },
    },
    handler: async (request, reply) => {
      const id = request.params.artist_id;
      await conditionalWrite(
        ifMatch(request, 'artist', id),
        (versions) => deleteArtist(app.db, id, versions),
        async () => missingArtist(await artistExists(app.db, id)),
      );
      return reply.code(204).send(null);
    },
  });
};
