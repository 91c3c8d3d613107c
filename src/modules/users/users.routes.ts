import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { badRequest, notFound, type ErrorDetail } from '../../errors.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError } from '../../errors.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { conditionalWrite, ifMatch, resourceEtag } from '../../http/etag.js';
import { LIST_HEADERS, filterQuery, listQuery, listQuerystring, pathOf, queryStringOf, setListHeaders, type Condition } from '../../query/index.js';
import { INT_MAX } from '../../query/collection.js';
import { findAlias } from '../aliases/aliases.repository.js';
import { usersCollection } from './users.collection.js';
import { ALIAS_PATTERN, CreateUserBody, PatchUserBody, User, UserIdParams, UserOrAliasParams } from './users.schemas.js';
import { deleteUser, findUser, insertUser, listUsers, updateUser, userExists, type VersionedUser, insertUsers } from './users.repository.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';

const tags = ['users'];
const aliasName = new RegExp(ALIAS_PATTERN);
const missingUser = (exists: boolean) => (exists ? null : 'User');
const withoutVersion = ({ version: _version, ...user }: VersionedUser): User => user;
// No details: interface.md keeps them for validation failures; the message names the conflict.
const duplicateEmail = () => new AppError('CONFLICT', 'A user with this email already exists.');

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** The list the conventions select, with the alias's filters (if any) always applied. */
  async function sendList(url: string, reply: FastifyReply, fixed: Condition[] = []) {
    const plan = listQuery(usersCollection, url, fixed);
    const { rows, total } = await listUsers(app.db, plan);
    setListHeaders(reply, pathOf(url), plan, total);
    return rows;
  }

  app.post('/users', {
    config: { scope: 'admin', idempotent: true },
    schema: {
      tags,
      summary: 'Create a user',
      body: bulkBody(CreateUserBody),
      response: { 201: bulkCreated(Type.Ref(User), 'The created user; `Location` is its path.'), ...errors(400, ...AUTH_ERRORS, 409, 413, 415) },
    },
    handler: async (request, reply) => {
      try {
        if (Array.isArray(request.body)) return reply.code(201).send(await insertUsers(app.db, request.body));
        const user = await insertUser(app.db, request.body);
        reply.code(201).header('Location', `/users/${user.id}`);
        return user;
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicateEmail();
        throw err;
      }
    },
  });

  app.get('/users', {
    config: { scope: 'admin', cached: ['users'] },
    schema: {
      tags,
      summary: 'List users',
      description: 'Filters combine (AND); sort with sort_by+order or sort; paginate with page+size, offset+limit or page+pagesize.',
      querystring: listQuerystring(usersCollection),
      response: { 200: Type.Array(Type.Ref(User), { maxItems: 100, headers: LIST_HEADERS }), ...errors(400, ...AUTH_ERRORS) },
    },
    handler: async (request, reply) => sendList(request.url, reply),
  });

  app.get('/users/:id', {
    config: { scope: 'admin', cached: ['users', 'aliases'] },
    schema: {
      tags,
      summary: 'Get a user, or the list an alias stands for',
      description:
        'An integer is a user id: one User. A lower-case hyphenated name is an alias (see /aliases): the list its filters select, exactly as GET /users with those filters; further filters add to them, and sort and page parameters apply.',
      params: UserOrAliasParams,
      // One path template serves both (OpenAPI allows no second /users/{alias}): the list parameters
      // say they apply to an alias only.
      querystring: listQuerystring(usersCollection, 'Only when {id} is an alias: with a user id, any query parameter is 400.'),
      response: {
        200: Type.Union([Type.Ref(User), Type.Array(Type.Ref(User), { maxItems: 100 })], {
          description: 'One User for an id; an array of User for an alias (with X-Total-Count and Link).',
          headers: LIST_HEADERS,
        }),
        ...errors(400, ...AUTH_ERRORS, 404),
      },
    },
    handler: async (request, reply) => {
      const segment = request.params.id;
      if (/^(0|[1-9]\d*)$/.test(segment)) {
        const id = Number(segment);
        const details: ErrorDetail[] = [];
        if (id < 1) details.push({ field: 'id', minimum: 'Must be at least 1.' });
        if (id > INT_MAX) details.push({ field: 'id', maximum: `Must be at most ${INT_MAX}.` });
        for (const part of queryStringOf(request.url).split('&').filter(Boolean)) {
          if (part.startsWith('fields=')) continue; // read by http/fields.plugin.ts
          details.push({ field: decodeURIComponentSafe(part.split('=')[0] ?? ''), unknown: 'Unknown query parameter.' });
        }
        if (details.length > 0) throw badRequest(details, 'Request validation failed.');
        const user = await findUser(app.db, id);
        if (!user) throw notFound('User');
        reply.header('ETag', resourceEtag('user', user.id, user.version));
        return withoutVersion(user);
      }
      if (!aliasName.test(segment)) {
        throw badRequest(
          [{ field: 'id', invalid: 'Must be a user id (integer) or an alias name (lower-case words joined by hyphens).' }],
          'Request validation failed.',
        );
      }
      const alias = await findAlias(app.db, 'users', segment);
      if (!alias) throw notFound('Alias');
      return sendList(request.url, reply, filterQuery(usersCollection, alias.query));
    },
  });

  app.patch('/users/:id', {
    config: { scope: 'admin' },
    schema: {
      tags,
      summary: 'Update some fields of a user',
      description: 'Partial update: send any of the fields (same rules as on create). Answers the whole user.',
      params: UserIdParams,
      body: PatchUserBody,
      response: { 200: Type.Ref(User), ...errors(400, ...AUTH_ERRORS, 404, 409, 412, 413, 415) },
    },
    handler: async (request, reply) => {
      const id = request.params.id;
      try {
        const user = await conditionalWrite(
          ifMatch(request, 'user', id),
          (versions) => updateUser(app.db, id, request.body, versions),
          async () => missingUser(await userExists(app.db, id)),
        );
        reply.header('ETag', resourceEtag('user', user.id, user.version));
        return withoutVersion(user);
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicateEmail();
        throw err;
      }
    },
  });

  app.delete('/users/:id', {
    config: { scope: 'admin' },
    schema: {
      tags,
      summary: 'Delete a user',
      params: UserIdParams,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errors(400, ...AUTH_ERRORS, 404, 412) },
    },
    handler: async (request, reply) => {
      const id = request.params.id;
      await conditionalWrite(
        ifMatch(request, 'user', id),
        (versions) => deleteUser(app.db, id, versions),
        async () => missingUser(await userExists(app.db, id)),
      );
      return reply.code(204).send(null);
    },
  });
};

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
