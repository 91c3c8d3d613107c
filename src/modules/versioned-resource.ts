import { sql, type Expression, type SqlBool } from 'kysely';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import type { Scope } from '../auth/scopes.js';
import { notFound } from '../errors/index.js';
import { AUTH_ERRORS, errors } from '../schemas.js';
import { conditionalWrite, ifMatch, resourceEtag } from '../http/etag.js';

// The shape every stored resource with a version shares (artists, albums, songs, users): GET one
// with its version ETag, PATCH and DELETE that check If-Match inside their own statement, and a 404
// that names the first missing kind on the path. Each kind declares itself (a `VersionedResource`)
// the way a collection declares its filters; nothing here knows one kind from another.

/** One level of a resource's path: `/artists/1/albums/2` is [artist 1, album 2 under artist 1]. */
export interface PathStep {
  /** The name a 404 uses: "Album not found.". */
  kind: string;
  table: 'artists' | 'albums' | 'songs' | 'users';
  id: number;
  /** The column that ties this row to the previous step's. */
  parent?: 'artist_id' | 'album_id';
}

/** The first kind on the path that does not exist (each under its parent), or null when all do. */
export async function missingKind(db: Db, steps: readonly PathStep[]): Promise<string | null> {
  for (const [i, step] of steps.entries()) {
    const parent = i > 0 ? steps[i - 1] : undefined;
    const underParent = parent && step.parent ? sql` and ${sql.ref(step.parent)} = ${parent.id}` : sql``;
    const found = await sql<{ id: number }>`select id from ${sql.table(step.table)} where id = ${step.id}${underParent}`.execute(db);
    if (found.rows.length === 0) return step.kind;
  }
  return null;
}

/**
 * The row read, or the 404 that names what is missing on its path. The read found no row, so only
 * its parents are looked up: when they all exist the row is what is missing (a single artist's 404
 * costs no statement after its read; an album's, one).
 */
export async function existing<T>(db: Db, row: T | undefined, steps: readonly PathStep[]): Promise<T> {
  if (row !== undefined) return row;
  throw notFound((await missingKind(db, steps.slice(0, -1))) ?? steps[steps.length - 1]!.kind);
}

/**
 * The row at the end of `steps`, only under its own parents, and only at one of `versions` when
 * given: the condition of every write to one resource, so that it checks the path and the version
 * in its own statement. A song: `id = 3 and album_id in (select id from albums where id = 2 and
 * artist_id = 1)`.
 */
export function atPath(steps: readonly PathStep[], versions?: number[]): Expression<SqlBool> {
  const condition = underParents(steps, steps.length - 1);
  return versions === undefined ? condition : sql<SqlBool>`${condition} and version in (${sql.join(versions)})`;
}

function underParents(steps: readonly PathStep[], i: number): Expression<SqlBool> {
  const step = steps[i]!;
  if (i === 0 || !step.parent) return sql<SqlBool>`id = ${step.id}`;
  const parent = i === 1 ? sql`${steps[0]!.id}` : sql`(select id from ${sql.table(steps[i - 1]!.table)} where ${underParents(steps, i - 1)})`;
  return sql<SqlBool>`id = ${step.id} and ${sql.ref(step.parent)} ${i === 1 ? sql`=` : sql`in`} ${parent}`;
}

/** Deletes the row at the end of `steps` (see atPath); undefined when nothing was deleted. */
export async function removeAt(db: Db, steps: readonly PathStep[], versions: number[] | undefined): Promise<true | undefined> {
  const result = await db
    .deleteFrom(steps[steps.length - 1]!.table)
    .where(atPath(steps, versions))
    .executeTakeFirst();
  return result.numDeletedRows > 0n ? true : undefined;
}

/** A route's documentation: what its OpenAPI operation says. */
interface RouteDocs {
  operationId?: string;
  summary: string;
  description?: string;
}

/** A stored resource with a version: how to address, read and write it, and how its routes read. */
/** A row as its representation: every field its table module names, without the row version (the ETag's). */
export const withoutVersion = <R extends { version: number }>({ version: _version, ...rest }: R): Omit<R, 'version'> => rest;

export interface VersionedResource<Key, Row extends { id: number; version: number }, Patch> {
  /** The route path, e.g. `/artists/:artist_id/albums/:album_id`. */
  url: string;
  params: TSchema;
  tags: string[];
  /** The kind in its ETags (`"album-2-v3"`). */
  etagKind: string;
  /** The scope PATCH and DELETE need. */
  writeScope: Scope;
  /** Where the row sits, for the 404 that names what is missing. */
  path: (key: Key) => PathStep[];
  id: (key: Key) => number;
  get: (db: Db, key: Key) => Promise<Row | undefined>;
  update: (db: Db, key: Key, patch: Patch, versions: number[] | undefined) => Promise<Row | undefined>;
  /** The representation PATCH answers (and GET, unless `read.view` says otherwise). */
  view: (row: Row) => unknown;
  /**
   * GET one; absent when the kind's GET is its own route (users: a user or an alias's list). Its
   * answer is a function of the row read, so the response cache may store it (http/response-cache.ts).
   */
  read?: RouteDocs & { scope: Scope; response: TSchema; view?: (row: Row) => unknown };
  /** `conflict`: the 409 message when the update hits a unique constraint. */
  edit: RouteDocs & { body: TSchema; response: TSchema; conflict?: string };
  /** DELETE removes the row at the end of `path` (children go by ON DELETE CASCADE). */
  delete: RouteDocs;
}

/** GET, PATCH and DELETE of one resource, as its declaration says. */
export function addVersionedRoutes<Key, Row extends { id: number; version: number }, Patch>(
  app: FastifyInstance,
  def: VersionedResource<Key, Row, Patch>,
): void {
  const { url, params, tags } = def;
  const keyOf = (request: FastifyRequest) => request.params as Key;
  const { read } = def;

  if (read) {
    const view = read.view ?? def.view;
    app.get(url, {
      config: { scope: read.scope, cached: true },
      schema: {
        tags,
        ...docs(read),
        params,
        response: { 200: read.response, ...errors(400, ...AUTH_ERRORS, 404) },
      },
      handler: async (request, reply) => {
        const key = keyOf(request);
        const row = await existing(app.db, await def.get(app.db, key), def.path(key));
        reply.header('ETag', resourceEtag(def.etagKind, row.id, row.version));
        return view(row);
      },
    });
  }

  app.patch(url, {
    config: { scope: def.writeScope, ...(def.edit.conflict ? { conflict: def.edit.conflict } : {}) },
    schema: {
      tags,
      ...docs(def.edit),
      params,
      body: def.edit.body,
      response: { 200: def.edit.response, ...errors(400, ...AUTH_ERRORS, 404, ...(def.edit.conflict ? [409] : []), 412, 413, 415) },
    },
    handler: async (request, reply) => {
      const key = keyOf(request);
      const row = await conditionalWrite(
        ifMatch(request, def.etagKind, def.id(key)),
        (versions) => def.update(app.db, key, request.body as Patch, versions),
        () => missingKind(app.db, def.path(key)),
      );
      reply.header('ETag', resourceEtag(def.etagKind, row.id, row.version));
      return def.view(row);
    },
  });

  app.delete(url, {
    config: { scope: def.writeScope },
    schema: {
      tags,
      ...docs(def.delete),
      params,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errors(400, ...AUTH_ERRORS, 404, 412) },
    },
    handler: async (request, reply) => {
      const key = keyOf(request);
      await conditionalWrite(
        ifMatch(request, def.etagKind, def.id(key)),
        (versions) => removeAt(app.db, def.path(key), versions),
        () => missingKind(app.db, def.path(key)),
      );
      return reply.code(204).send(null);
    },
  });
}

/** Only the keys a route sets: an absent operationId or description stays absent in the document. */
function docs({ operationId, summary, description }: RouteDocs) {
  return { ...(operationId ? { operationId } : {}), summary, ...(description ? { description } : {}) };
}
