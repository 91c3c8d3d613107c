import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../errors.js';
import { errors } from '../../schemas.js';

const tags = ['health'];

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    schema: {
      tags,
      summary: 'Liveness: the process is up',
      security: [],
      response: { 200: Type.Object({ status: Type.Literal('ok') }) },
    },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/ready', {
    schema: {
      tags,
      summary: 'Readiness: the database answers',
      security: [],
      response: {
        200: Type.Object({ status: Type.Literal('ready'), database: Type.Literal('ok') }),
        ...errors(),
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
