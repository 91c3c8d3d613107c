import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NoQuery, errors } from '../../schemas.js';
import { errorBody, sendError } from '../../errors/index.js';

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

  let ready = true;
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
    handler: async (request, reply) => {
      try {
        await app.connection.ping();
      } catch (err) {
        // Probes come every few seconds through an outage: its start is logged once, not each probe.
        if (ready) request.log.warn({ error: (err as Error).message }, 'not ready: the database cannot be reached');
        ready = false;
        // Sent here, not thrown: the error handler would log every 503 as an error.
        return sendError(
          (reply as FastifyReply).header('Retry-After', '1'),
          503,
          errorBody('SERVICE_UNAVAILABLE', 'Not ready: the database cannot be reached.'),
        );
      }
      if (!ready) request.log.info('ready again: the database answers');
      ready = true;
      return { status: 'ready' as const, database: 'ok' as const };
    },
  });
};
