import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../errors.js';
import { NoQuery, errors } from '../../schemas.js';

const tags = ['health'];

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    schema: {
      tags,
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      description: 'Public. Answers as long as the process serves requests; does not touch the database.',
      security: [],
      querystring: NoQuery,
      response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errors(400) },
    },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/ready', {
    schema: {
      tags,
      operationId: 'getReady',
      summary: 'Readiness: the database answers',
      description: 'Public. 200 when a round trip to the database succeeds, 503 otherwise.',
      security: [],
      querystring: NoQuery,
      response: {
        200: Type.Object({ status: Type.Literal('ready'), database: Type.Literal('ok') }),
        ...errors(400),
      },
    },
    handler: async (request) => {
      try {
        await app.connection.ping();
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        throw new AppError('SERVICE_UNAVAILABLE', 'Not ready: the database cannot be reached.', undefined, { 'Retry-After': '1' });
      }
      return { status: 'ready' as const, database: 'ok' as const };
    },
  });
};
