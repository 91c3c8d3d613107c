import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../errors/index.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { grants } from '../../auth/scopes.js';
import type { FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { readEvents, type EventRow } from './events.repository.js';
import { EventStream } from './events.stream.js';
import { EVENT_TYPES, EventsQuery, FeedHeaders, StreamQuery, eventScope } from './events.schemas.js';

const tags = ['events'];

/** What a caller may read: the types whose scope it holds (users and aliases: admin); asking for others is 403. */
function readableTypes(request: FastifyRequest, asked: string | undefined): string[] {
  const scopes = request.caller?.scopes ?? [];
  const may = (type: string) => grants(scopes, eventScope(type));
  const types = asked ? [...new Set(asked.split(','))] : EVENT_TYPES.filter(may);
  const refused = types.filter((t) => !may(t));
  if (refused.length > 0) throw new AppError('FORBIDDEN', `Events of users and aliases (${refused.join(', ')}) are personal data: they need the admin scope.`);
  return types;
}

const STREAM_DESCRIPTION = `Server-Sent Events (\`text/event-stream\`), one message per event:

    id: 42
    data: {"id":"…","sequence":42,"type":"album.updated","path":"/artists/1/albums/2","resource":{…},"at":"…"}

The \`id\` is the event's sequence. A comment line \`: heartbeat\` comes every EVENTS_HEARTBEAT_SECONDS so proxies keep the connection open and a client can tell a quiet stream from a dead one. To resume, reconnect with \`Last-Event-ID\` (browsers' EventSource does it by itself): the stream goes on with the next event, with no gap and no duplicate. Without it, \`after\` says where to start; without either, the stream starts with the next event written. Events committed by any process or instance on the same database reach every stream. Same scope rules as GET /events.

A stream lives no longer than its token: it ends at the token's \`expires_at\`, and when the token is revoked it ends before any event written after the revocation reaches it (through this instance: at once; through another: with the next event). Reconnecting then gets 401. The bootstrap CATALOGUE_ADMIN_TOKEN never ends.`;

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/events', {
    config: { scope: 'read' },
    schema: {
      tags,
      operationId: 'listEvents',
      summary: 'The change feed: events after a sequence, in order',
      description:
        'Every create, update and delete of an artist, album, song, user or alias, recorded in the same transaction as the change. Page through with `after` (or follow `Link: rel="next"`). User and alias events need the `admin` scope (personal data; aliases are listed by GET /aliases to `admin` only, the same rule): without it they are left out, and asking for them in `types` is 403. Events older than EVENTS_RETENTION_DAYS are deleted.',
      querystring: EventsQuery,
      response: {
        200: Type.Array(Type.Ref('Event'), { maxItems: 1000, description: 'Events in ascending sequence.', headers: FeedHeaders }),
        ...errors(400, ...AUTH_ERRORS),
      },
    },
    handler: async (request, reply) => {
      const { after = 0, size = 100 } = request.query;
      const types = readableTypes(request, request.query.types);
      const rows = await readEvents(app.db, after, size, types.length === EVENT_TYPES.length ? null : types);
      const last = rows.length ? rows[rows.length - 1]!.sequence : after;
      const params = new URLSearchParams({ after: String(last) });
      if (request.query.types) params.set('types', request.query.types);
      params.set('size', String(size));
      reply.header('Link', `</events?${params.toString()}>; rel="next"`).header('X-Last-Sequence', String(last));
      return rows.map((row: EventRow) => ({ ...row, resource: JSON.parse(row.resource) as unknown }));
    },
  });

  app.get('/events/stream', {
    config: { scope: 'read' },
    schema: {
      tags,
      operationId: 'streamEvents',
      summary: 'The change feed as Server-Sent Events',
      description: STREAM_DESCRIPTION,
      querystring: StreamQuery,
      headers: Type.Object({
        'last-event-id': Type.Optional(
          Type.String({
            maxLength: 15,
            pattern: '^[0-9]{1,15}$',
            'x-error-message': 'Must be the sequence of an event.',
            description: 'Resume after this sequence (what the last `id:` line said).',
          }),
        ),
      }),
      response: {
        200: {
          description: 'An endless `text/event-stream` (see above).',
          content: { 'text/event-stream': { schema: Type.String({ maxLength: 1_000_000_000, description: 'Server-Sent Events, endless.' }) } },
        },
        ...errors(400, ...AUTH_ERRORS),
      },
    },
    handler: async (request, reply) => {
      const types = new Set(readableTypes(request, request.query.types));
      const lastEventId = request.headers['last-event-id'];
      const start = lastEventId !== undefined ? Number(lastEventId) : request.query.after;
      // Written past Fastify (hijacked), so the headers the hooks set (security, RateLimit-*,
      // X-Request-Id, CORS) are carried over as every other answer carries them.
      const headers = reply.getHeaders() as OutgoingHttpHeaders;
      reply.hijack();
      reply.raw.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        // The connection ends with the stream: nothing else is sent on it, and shutdown need not wait for it.
        connection: 'close',
      });
      // HEAD: the headers a stream would start with, and no stream.
      if (request.method === 'HEAD') return void reply.raw.end();
      reply.raw.write('retry: 1000\n\n');
      const stream = new EventStream(reply.raw, start, (row) => types.has(row.type), request.caller?.tokenId ?? null);
      reply.raw.once('close', app.events.open(stream));
      try {
        await stream.start(app.db, app.events.feed, app.config.eventsHeartbeatMs);
      } catch (err) {
        request.log.warn({ err }, 'event stream failed; the client resumes with Last-Event-ID');
        stream.end();
      }
    },
  });
};
