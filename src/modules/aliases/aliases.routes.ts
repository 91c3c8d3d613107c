import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors/index.js';
import { declared, filterQuery, LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';
import { aliasesCollection } from './aliases.collection.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { removeAlias, getAlias, pageAliases, putAlias } from './aliases.repository.js';
import { UNTAGGED_IF_MATCH_DESCRIPTION, preconditionFailed, untaggedIfMatch } from '../../http/etag.js';
import { grants } from '../../auth/scopes.js';
import { ALIAS_READ_SCOPE, Alias, PutAliasBody, aliasParams, type AliasCollections } from './aliases.schemas.js';

const tags = ['aliases'];

export const aliasRoutes: FastifyPluginAsyncTypebox<{ collections: AliasCollections }> = async (app, { collections }) => {
  const AliasParams = aliasParams(collections);

  app.get('/aliases', {
    config: { scope: 'read', cached: true },
    schema: {
      tags,
      summary: 'List the aliases',
      description:
        'Every alias path, e.g. `GET /users/young-brazilians`, with the filters it stands for; by collection and name unless sorted, paginated as every list. An alias is a stored filter over users, personal data: aliases are listed to the `admin` scope only, as their events in /events are. To a `read` or `write` token they are left out (an empty list, total 0).',
      querystring: listQuerystring(aliasesCollection),
      response: { 200: Type.Array(Type.Ref(Alias), { maxItems: 100, headers: LIST_HEADERS }), ...errors(400, ...AUTH_ERRORS) },
    },
    handler: async (request, reply) => {
      const plan = listQuery(aliasesCollection, request.url);
      const { rows, ...found } = grants(request.caller?.scopes ?? [], ALIAS_READ_SCOPE) ? await pageAliases(app.db, plan) : { rows: [], total: 0 };
      setListHeaders(reply, '/aliases', plan, found);
      return rows;
    },
  });

  app.put('/aliases/:collection/:name', {
    config: { scope: 'admin' },
    schema: {
      tags,
      summary: 'Create or replace an alias',
      description: 'The query may hold only filter parameters of the collection, each checked as in a request.',
      params: AliasParams,
      body: PutAliasBody,
      response: {
        200: Type.Ref(Alias, { description: 'Replaced.' }),
        201: Type.Ref(Alias, { description: 'Created; Location is the alias path.' }),
        ...errors(400, ...AUTH_ERRORS, 413, 415),
      },
    },
    handler: async (request, reply) => {
      const { collection, name } = request.params;
      const def = declared(collections, collection);
      if (!def) throw notFound('Collection');
      filterQuery(def, request.body.query);
      const alias = { name, collection, query: request.body.query };
      if (await putAlias(app.db, alias)) reply.code(201).header('Location', `/${collection}/${name}`);
      return alias;
    },
  });

  app.delete('/aliases/:collection/:name', {
    config: { scope: 'admin' },
    schema: {
      tags,
      summary: 'Delete an alias',
      params: AliasParams,
      headers: Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 16384, description: UNTAGGED_IF_MATCH_DESCRIPTION })) }),
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request, reply) => {
      const { collection, name } = request.params;
      if (untaggedIfMatch(request) === 'fails') throw (await getAlias(app.db, collection, name)) ? preconditionFailed() : notFound('Alias');
      if (!(await removeAlias(app.db, collection, name))) throw notFound('Alias');
      return reply.code(204).send(null);
    },
  });
};
