import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { connect, type Connection } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { warnAboutConnectionCapacity } from './db/capacity.js';
import databasePlugin from './db/database.plugin.js';
import summaryFolderPlugin from './db/summary-folder.js';
import authPlugin from './auth/auth.plugin.js';
import docsPlugin from './docs/docs.plugin.js';
import conditionalPlugin from './http/conditional.plugin.js';
import { fieldsPlugin } from './http/fields.plugin.js';
import idempotencyPlugin from './http/idempotency.plugin.js';
import methodNotAllowedPlugin, { hasEmptySegment } from './http/method-not-allowed.plugin.js';
import { ErrorBody, errorHandler, notFoundHandler } from './errors/index.js';
import securityPlugin from './http/security.plugin.js';
import rateLimitPlugin from './http/rate-limit.plugin.js';
import drainPlugin from './http/drain.plugin.js';
import { httpServerOptions } from './http/limits.js';
import { requestId } from './http/request-id.js';
import { RequestLog } from './http/request-log.js';
import { needsToken } from './auth/scopes.js';
import { registerJsonBodyParser } from './http/json-body.js';

import metricsPlugin from './metrics/metrics.plugin.js';
import responseCachePlugin, { frontLaneServer, type FrontLane } from './http/response-cache.js';
import { metricsRoutes } from './metrics/metrics.routes.js';
import { makeValidatorCompiler, sharedSerializers } from './validation.js';
import { NoQuery } from './schemas.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { tokenRoutes } from './modules/tokens/tokens.routes.js';
import { CreatedToken, TokenInfo } from './modules/tokens/tokens.schemas.js';
import { artistRoutes } from './modules/artists/artists.routes.js';
import { Artist, ArtistView } from './modules/artists/artists.schemas.js';
import { albumRoutes } from './modules/albums/albums.routes.js';
import { Album, ArtistWithAlbums } from './modules/albums/albums.schemas.js';
import { songRoutes } from './modules/songs/songs.routes.js';
import { AlbumWithSongs, Song } from './modules/songs/songs.schemas.js';
import { userRoutes } from './modules/users/users.routes.js';
import { User } from './modules/users/users.schemas.js';
import { usersCollection } from './modules/users/users.collection.js';
import usersIndexPlugin from './modules/users/index/users-index.plugin.js';
import { aliasRoutes } from './modules/aliases/aliases.routes.js';
import { Alias } from './modules/aliases/aliases.schemas.js';
import { searchRoutes } from './modules/search/search.routes.js';
import { SearchHit } from './modules/search/search.schemas.js';
import eventsPlugin from './modules/events/events.plugin.js';
import { eventRoutes } from './modules/events/events.routes.js';
import { EventSchema } from './modules/events/events.schemas.js';
import webhooksPlugin from './modules/webhooks/webhooks.plugin.js';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { Webhook, WebhookDelivery } from './modules/webhooks/webhooks.schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
  }
}

export interface BuildOptions {
  /** Use this connection instead of opening one from config.databaseUrl (tests, CLI). */
  connection?: Connection;
  /** Override the logger (tests pass false). */
  logger?: FastifyServerOptions['logger'];
}

/** Schemas referenced by $id from routes; they become the OpenAPI components. */
const SHARED_SCHEMAS = [
  ErrorBody,
  Artist,
  ArtistView,
  Album,
  ArtistWithAlbums,
  Song,
  AlbumWithSongs,
  TokenInfo,
  CreatedToken,
  User,
  Alias,
  SearchHit,
  EventSchema,
  Webhook,
  WebhookDelivery,
];

/**
 * Behind reverse proxies request.ip is the client X-Forwarded-For names, as far as TRUST_PROXY trusts
 * it. A hop count trusts the nearest hops whoever they are (Fastify itself refuses a bare number, as a
 * client reaching the service directly could then name any address): only for a service that can be
 * reached through its proxies alone.
 */
function trustedProxies(trust: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address: string, hop: number) => hop < trust;
  return [...trust];
}

/** The one factory: the server, the CLI and the tests all run this app. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const lane: FrontLane = {};
  const app = Fastify({
    serverFactory: frontLaneServer(lane),
    logger: options.logger ?? (config.logLevel === 'silent' ? false : { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] }),
    genReqId: requestId,
    logController: new RequestLog(),
    trustProxy: trustedProxies(config.trustProxy),
    bodyLimit: config.bodyLimit,
    ajv: { customOptions: { allErrors: true, strict: false } },
    schemaController: { compilersFactory: sharedSerializers() },
    // Paths are exactly as documented: `/artists/` is not `/artists` (404 "Route not found."), so the
    // OpenAPI document and a validating proxy agree with the service on every URL.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Requests reaching us during the drain are served (with Connection: close), not refused.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ...httpServerOptions(config),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  app.setValidatorCompiler(makeValidatorCompiler());
  app.setErrorHandler(errorHandler);
  // Request bodies are JSON only. Fastify also parses text/plain by default, which let a text body
  // reach validation as a string (400 "Must be object"); without that parser it is 415
  // UNSUPPORTED_MEDIA_TYPE like every other non-JSON type. No route takes a text body (GET /metrics
  // answers text, which is unaffected).
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    if (hasEmptySegment(request.url)) return notFoundHandler(request, reply);
    done();
  });
  app.addHook('onRoute', (route) => {
    if (needsToken(route.config) && route.schema && !route.schema.querystring) {
      route.schema.querystring = NoQuery;
    }
  });

  const connection = options.connection ?? connect(config, app.log);
  await app.register(databasePlugin, { connection });
  await migrateToLatest(connection.db);
  await app.register(summaryFolderPlugin);
  connection.prepareStatements?.();
  await warnAboutConnectionCapacity(connection, app.log);
  await app.register(drainPlugin);
  await app.register(securityPlugin);
  await app.register(rateLimitPlugin);
  await app.register(authPlugin);
  await app.register(methodNotAllowedPlugin);
  await app.register(conditionalPlugin);
  await app.register(fieldsPlugin);
  await app.register(idempotencyPlugin);
  await app.register(metricsPlugin);
  await app.register(responseCachePlugin, { lane });
  await app.register(docsPlugin);
  await app.register(eventsPlugin);
  await app.register(webhooksPlugin);

  await app.register(healthRoutes);
  await app.register(tokenRoutes);
  await app.register(artistRoutes);
  await app.register(albumRoutes);
  await app.register(songRoutes);
  await app.register(usersIndexPlugin);
  await app.register(userRoutes);
  await app.register(aliasRoutes, { collections: { users: usersCollection } });
  await app.register(searchRoutes);
  await app.register(eventRoutes);
  await app.register(webhookRoutes);
  await app.register(metricsRoutes);

  return app;
}
