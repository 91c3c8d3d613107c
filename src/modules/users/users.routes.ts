import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { badRequest, notFound, validationDetails } from '../../errors/index.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { resourceEtag } from '../../http/etag.js';
import { addVersionedRoutes, withoutVersion, type VersionedResource } from '../versioned-resource.js';
import { LIST_HEADERS, filterQuery, listQuery, listQuerystring, pathOf, setListHeaders, type Condition } from '../../query/index.js';
import { getAlias } from '../aliases/aliases.repository.js';
import { usersCollection } from './users.collection.js';
import { CreateUserBody, PatchUserBody, User, UserIdParams, UserOrAliasParams, type UserKey } from './users.schemas.js';
import { createUser, createUsers, getUser, listUsers, updateUser, userPath, type VersionedUser } from './users.repository.js';
import { bulkBody, bulkCreated } from '../../http/bulk.js';
import { arrivalOf } from '../../db/arrivals.js';

const tags = ['users'];
/** A single user takes no query parameter but `fields` (its names are checked by http/fields.plugin.ts). */
const UserQuery = Type.Object({ fields: Type.Optional(Type.String()) }, { additionalProperties: false });
// No details: interface.md keeps them for validation failures; the message names the conflict.
const duplicateEmail = 'A user with this email already exists.';

/** One user: edit it, remove it. ETags come from the row version; GET is the dispatcher below. */
const userResource: VersionedResource<UserKey, VersionedUser, PatchUserBody> = {
  url: '/users/:id',
  params: UserIdParams,
  tags,
  etagKind: 'user',
  writeScope: 'admin',
  path: userPath,
  id: (at) => at.id,
  get: getUser,
  update: updateUser,
  view: withoutVersion,
  edit: {
    summary: 'Update some fields of a user',
    description: 'Partial update: send any of the fields (same rules as on create). Answers the whole user.',
    body: PatchUserBody,
    response: Type.Ref(User),
    conflict: duplicateEmail,
  },
  delete: { summary: 'Delete a user' },
};

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** The list the conventions select, with the alias's filters (if any) always applied. */
  async function sendList(url: string, reply: FastifyReply, fixed: Condition[] = []) {
    const plan = listQuery(usersCollection, url, fixed);
    // The users index answers the lists it declares (index/answers.ts), current with every write committed before the request arrived; SQL the rest.
    const indexed = await app.usersIndex?.list(plan, arrivalOf(reply.request.raw));
    app.usersListAnswered(indexed ? 'index' : 'sql');
    const { rows, ...found } = indexed ?? (await listUsers(app.db, plan));
    setListHeaders(reply, pathOf(url), plan, found);
    return rows;
  }

  app.post('/users', {
    config: { scope: 'admin', idempotent: true, conflict: duplicateEmail },
    schema: {
      tags,
      summary: 'Create a user',
      body: bulkBody(CreateUserBody),
      response: { 201: bulkCreated(Type.Ref(User), 'The created user; `Location` is its path.'), ...errors(400, ...AUTH_ERRORS, 409, 413, 415) },
    },
    handler: async (request, reply) => {
      const { body } = request;
      if (Array.isArray(body)) return reply.created((db) => createUsers(db, body));
      return reply.created(
        (db) => createUser(db, body),
        (user) => `/users/${user.id}`,
      );
    },
  });

  app.get('/users', {
    config: { scope: 'admin', cached: true },
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
    config: { scope: 'admin', cached: true },
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
    // The params schema has told a user id (a number by now) from an alias name (a string).
    handler: async (request, reply) => {
      const { id } = request.params;
      if (typeof id === 'number') {
        const noQuery = request.compileValidationSchema(UserQuery, 'querystring');
        if (!noQuery(request.query)) throw badRequest(validationDetails(noQuery.errors ?? [], 'querystring'), 'Request validation failed.');
        // The users index holds every user with its row version (issue 32: no statement on PostgreSQL); SQL when it cannot say.
        const held = await app.usersIndex?.user(id, arrivalOf(request.raw));
        app.usersAnswered(held ? 'index' : 'sql');
        const user = held ?? (await getUser(app.db, { id }));
        if (!user) throw notFound('User');
        reply.header('ETag', resourceEtag('user', user.id, user.version));
        return withoutVersion(user);
      }
      const arrival = arrivalOf(request.raw);
      const alias = await getAlias(app.db, 'users', id, arrival === undefined ? undefined : await app.versionsAfter(arrival));
      if (!alias) throw notFound('Alias');
      return sendList(request.url, reply, filterQuery(usersCollection, alias.query));
    },
  });

  addVersionedRoutes(app, userResource);
};
