import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/index.js';

// Entity tags and the preconditions built on them (RFC 9110 section 13).
//
// A stored resource's tag is derived from its kind, id and row version: the version is bumped by
// every write, ids are never reused, so the tag changes exactly when the resource does, and a
// PATCH/DELETE can check it inside its own UPDATE/DELETE statement (no read-then-write race).
// Composite representations (an artist with its albums, lists) hash their serialized body instead,
// since they change when any member does.

export function resourceEtag(kind: string, id: number, version: number): string {
  return `"${kind}-${id}-v${version}"`;
}

/**
 * A body's tag and its UTF-8 bytes, as the answer is sent. The tag is the sha256 of the body and of
 * each describing part, each followed by a NUL (UTF-8), base64url, cut to 32 characters: a function
 * of the bytes alone, so the same on every worker, instance and restart. The body is encoded once,
 * into a buffer the describing parts follow, and the bytes are both hashed and written from it
 * (hashing the text encoded it, then the socket write and Fastify's Content-Length went over it again).
 */
export function taggedBody(body: string, describing: readonly string[]): { etag: string; bytes: Buffer } {
  let tail = '\0';
  for (const part of describing) tail += `${part}\0`;
  const size = Buffer.byteLength(body);
  const buffer = Buffer.allocUnsafe(size + Buffer.byteLength(tail));
  buffer.write(body, 0, 'utf8');
  buffer.write(tail, size, 'utf8');
  return { etag: `"h-${hash('sha256', buffer, 'base64url').slice(0, 32)}"`, bytes: buffer.subarray(0, size) };
}

/** The entity tags of an If-Match / If-None-Match value, or '*'. */
export function parseEtagList(header: string): '*' | string[] {
  const value = header.trim();
  if (value === '*') return '*';
  return value
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
}

/** If-None-Match uses the weak comparison: W/"x" and "x" are the same. */
export function noneMatchHits(header: string, etag: string): boolean {
  const tags = parseEtagList(header);
  if (tags === '*') return true;
  const strip = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);
  return tags.some((tag) => strip(tag) === strip(etag));
}

/**
 * What a PATCH/DELETE requires of the stored row: nothing (no If-Match), only that it exists
 * (`If-Match: *`), or one of the listed versions. Strong comparison: weak tags never match.
 */
export type Precondition = { type: 'none' } | { type: 'any' } | { type: 'versions'; versions: number[] };

export function ifMatch(request: FastifyRequest, kind: string, id: number): Precondition {
  const header = request.headers['if-match'];
  if (header === undefined) return { type: 'none' };
  const tags = parseEtagList(header);
  if (tags === '*') return { type: 'any' };
  const prefix = `"${kind}-${id}-v`;
  const versions: number[] = [];
  for (const tag of tags) {
    if (!tag.startsWith(prefix) || !tag.endsWith('"')) continue;
    const digits = tag.slice(prefix.length, -1);
    if (/^[1-9][0-9]{0,9}$/.test(digits)) versions.push(Number(digits));
  }
  return { type: 'versions', versions };
}

/**
 * If-Match on a resource the API hands out no ETag for (a token, an alias): `*` asks only that it
 * exists (then the delete goes ahead); any entity tag cannot be the resource's current one, so the
 * condition is false (RFC 9110 13.1.1) and the answer is 412 for a resource that exists.
 */
export function untaggedIfMatch(request: FastifyRequest): 'none' | 'exists' | 'fails' {
  const header = request.headers['if-match'];
  if (header === undefined) return 'none';
  return parseEtagList(header) === '*' ? 'exists' : 'fails';
}

/** The If-Match request header of a resource without ETags, for its route schema. */
export const UNTAGGED_IF_MATCH_DESCRIPTION =
  'This resource has no ETag: `*` deletes it only if it exists (404 otherwise); any entity tag is 412 (it cannot match), and nothing is deleted.';

/** The versions a conditional write must find, or undefined when any version will do. */
export function requiredVersions(pre: Precondition): number[] | undefined {
  return pre.type === 'versions' ? pre.versions : undefined;
}

export const preconditionFailed = () =>
  new AppError('PRECONDITION_FAILED', 'The resource has changed: If-Match does not match its current ETag. Fetch it again.');

/**
 * Runs a write that touches nothing when the row is missing or its version does not match, and
 * turns "nothing touched" into the right answer: 404 naming the missing kind (preconditions do not
 * apply to a resource that is not there), otherwise 412.
 */
export async function conditionalWrite<T>(
  pre: Precondition,
  write: (versions: number[] | undefined) => Promise<T | undefined>,
  missingKind: () => Promise<string | null>,
): Promise<T> {
  const versions = requiredVersions(pre);
  const result = versions?.length === 0 ? undefined : await write(versions);
  if (result !== undefined) return result;
  const missing = await missingKind();
  if (missing) throw new AppError('NOT_FOUND', `${missing} not found.`);
  throw preconditionFailed();
}
