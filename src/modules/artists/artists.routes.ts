import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { Artist, ArtistParams, ArtistView, CreateArtistBody } from './artists.schemas.js';
import { findArtist, insertArtist } from './artists.repository.js';

const tags = ['artists'];

export const artistRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artists', {
    config: { scope: 'write' },
    schema: {
      tags,
      operationId: 'createArtist',
      summary: 'Create an artist',
      description: 'Stores a new artist. `name` is stored trimmed; `image` must be an absolute http(s) URL.',
      body: CreateArtistBody,
      response: { 201: Type.Ref(Artist, { description: 'The created artist; `Location` is its path.' }), ...errors(400, ...AUTH_ERRORS, 413, 415) },
    },
    handler: async (request, reply) => {
      const artist = await insertArtist(app.db, request.body);
      reply.code(201).header('Location', `/artists/${artist.id}`);
      return artist;
    },
  });

  app.get('/artists/:artist_id', {
    config: { scope: 'read' },
    schema: {
      tags,
      operationId: 'getArtist',
      summary: 'Get an artist',
      description: 'The representation has name and image; the id is not part of it.',
      params: ArtistParams,
      response: { 200: Type.Ref(ArtistView, { description: 'The artist.' }), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request) => {
      const artist = await findArtist(app.db, request.params.artist_id);
      if (!artist) throw notFound('Artist');
      return { name: artist.name, image: artist.image };
    },
  });
};
