import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors/index.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import type { Scope } from '../../auth/scopes.js';
import { CreateTokenBody, CreatedToken, TokenInfo, TokenParams } from './tokens.schemas.js';
import { createToken, getToken, pageActiveTokens, revokeToken } from './tokens.repository.js';
import { tokensCollection } from './tokens.collection.js';
import { readExpiresAt } from './expires-at.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';
import { UNTAGGED_IF_MATCH_DESCRIPTION, preconditionFailed, untaggedIfMatch } from '../../http/etag.js';

const tags = ['tokens'];

export const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/tokens', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'createToken',
      summary: 'Create an API token',
      description:
        'The secret is returned only in this response; it is stored as a hash. With `expires_at` the token is refused (401) from that time on, and an open event stream of it ends then.',
      body: CreateTokenBody,
      response: { 201: Type.Ref(CreatedToken, { description: 'The token, with its secret shown only here.' }), ...errors(400, ...AUTH_ERRORS, 413, 415) },
    },
    handler: async (request, reply) => {
      const expiresAt = request.body.expires_at === undefined ? null : readExpiresAt(request.body.expires_at, Date.now());
      const created = await reply.created(
        (db) => createToken(db, request.body.scopes as Scope[], request.body.name?.trim() ?? null, expiresAt),
        (token) => `/tokens/${token.id}`,
      );
      return { id: created.id, token: created.token, scopes: created.scopes, name: created.name, expires_at: created.expires_at };
    },
  });

  app.get('/tokens', {
    config: { scope: 'admin', cached: true },
    schema: {
      tags,
      operationId: 'listTokens',
      summary: 'List active tokens (without secrets)',
      description: 'Every token that is neither revoked nor expired, oldest first, paginated as every list. Secrets are never shown again.',
      querystring: listQuerystring(tokensCollection),
      response: {
        200: Type.Array(Type.Ref(TokenInfo), { description: 'Active tokens.', maxItems: 100, headers: LIST_HEADERS }),
        ...errors(400, ...AUTH_ERRORS),
      },
    },
    handler: async (request, reply) => {
      const plan = listQuery(tokensCollection, request.url);
      const { rows, ...found } = await pageActiveTokens(app.db, plan);
      setListHeaders(reply, '/tokens', plan, found);
      return rows;
    },
  });

  app.get('/tokens/:token_id', {
    config: { scope: 'admin', cached: true },
    schema: {
      tags,
      operationId: 'getToken',
      summary: 'Get an active token (without its secret)',
      description: 'What POST /tokens answered in `Location`. A revoked or unknown token is 404.',
      params: TokenParams,
      response: { 200: Type.Ref(TokenInfo), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request) => {
      const token = await getToken(app.db, request.params.token_id);
      if (!token) throw notFound('Token');
      return token;
    },
  });

  app.delete('/tokens/:token_id', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'revokeToken',
      summary: 'Revoke a token at once',
      description: 'The token stops working with the next request.',
      params: TokenParams,
      headers: Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 16384, description: UNTAGGED_IF_MATCH_DESCRIPTION })) }),
      response: { 204: Type.Null({ description: 'Revoked.' }), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request, reply) => {
      const id = request.params.token_id;
      if (untaggedIfMatch(request) === 'fails') throw (await getToken(app.db, id)) ? preconditionFailed() : notFound('Token');
      if (!(await revokeToken(app.db, id))) throw notFound('Token');
      return reply.code(204).send(null);
    },
  });
};
