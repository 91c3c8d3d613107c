import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { conditionalWrite, ifMatch, resourceEtag } from '../../http/etag.js';
import { Song, SongParams, UpdateSongBody } from './songs.schemas.js';
import { deleteSong, getSong, missingSongKind, updateSong } from './songs.lifecycle.repository.js';

const tags = ['songs'];

/** One song: read it, edit it, remove it. ETags come from the row version. */
export const songLifecycleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/artists/:artist_id/albums/:album_id/songs/:song_id', {
    config: { scope: 'read', cached: ['artists', 'albums', 'songs'] },
    schema: {
      tags,
      summary: 'Get a song',
      params: SongParams,
      response: { 200: Type.Ref(Song), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id, song_id } = request.params;
      const song = await getSong(app.db, artist_id, album_id, song_id);
      if (!song) throw notFound((await missingSongKind(app.db, artist_id, album_id, song_id)) ?? 'Song');
      reply.header('ETag', resourceEtag('song', song.id, song.version));
      return { id: song.id, name: song.name, time: song.time };
    },
  });

  app.patch('/artists/:artist_id/albums/:album_id/songs/:song_id', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Update a song',
      description: 'Partial update: send any of name, time (same rules as on create).',
      params: SongParams,
      body: UpdateSongBody,
      response: { 200: Type.Ref(Song), ...errors(400, ...AUTH_ERRORS, 404, 412, 413, 415) },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id, song_id } = request.params;
      const path = { artistId: artist_id, albumId: album_id, songId: song_id };
      const song = await conditionalWrite(
        ifMatch(request, 'song', song_id),
        (versions) => updateSong(app.db, path, request.body, versions),
        () => missingSongKind(app.db, artist_id, album_id, song_id),
      );
      reply.header('ETag', resourceEtag('song', song.id, song.version));
      return { id: song.id, name: song.name, time: song.time };
    },
  });

  app.delete('/artists/:artist_id/albums/:album_id/songs/:song_id', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Delete a song',
      params: SongParams,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errors(400, ...AUTH_ERRORS, 404, 412) },
    },
    handler: async (request, reply) => {
      const { artist_id, album_id, song_id } = request.params;
      await conditionalWrite(
        ifMatch(request, 'song', song_id),
        (versions) => deleteSong(app.db, { artistId: artist_id, albumId: album_id, songId: song_id }, versions),
        () => missingSongKind(app.db, artist_id, album_id, song_id),
      );
      return reply.code(204).send(null);
    },
  });
};
