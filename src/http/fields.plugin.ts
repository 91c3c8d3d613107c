import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { badRequest, type ErrorDetail } from '../errors/index.js';
import { parseQueryString, queryStringOf } from '../query/parse.js';
import { createHash } from 'node:crypto';
import { servedBy } from '../validation.js';

// Sparse fieldsets: `fields=name,albums.id` on every API GET that answers JSON objects (lists, single
// resources, composites). The fields a route offers are read from its own 200 response schema (the
// properties of its objects, and one level into arrays of objects such as a composite's `albums`),
// so a route declares nothing more and the list cannot drift from the document. A name it does not
// offer is 400 naming it. The answer keeps only the listed properties, in the route's order; `albums`
// alone keeps whole items, `albums.id` keeps albums with only their id. The ETag follows: a list's
// is the hash of its body; a stored resource's version tag gets the fields appended (so If-Match,
// which compares the full representation, does not match it).

// Names are data: what a route offers is kept in a Map, never looked up as a property of an object
// (`fields=constructor.x` once read Object.prototype.constructor and answered 500).
interface Offered {
  top: string[];
  /** Per array property, the properties of its items. */
  nested: Map<string, string[]>;
}

type Json = Record<string, unknown>;

/** The properties a response schema's objects have (refs resolved, arrays and unions looked into). */
function offeredBy(schema: unknown, resolve: (id: string) => unknown, depth = 0): Offered | undefined {
  let s = schema as Json | undefined;
  while (s && typeof s.$ref === 'string') s = resolve(s.$ref) as Json | undefined;
  if (!s) return undefined;
  if (s.type === 'array') return offeredBy(s.items, resolve, depth);
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const parts = ((s.anyOf ?? s.oneOf) as unknown[]).map((p) => offeredBy(p, resolve, depth)).filter((p): p is Offered => p !== undefined);
    if (parts.length === 0) return undefined;
    return { top: [...new Set(parts.flatMap((p) => p.top))], nested: new Map(parts.flatMap((p) => [...p.nested])) };
  }
  if (s.type !== 'object' || !s.properties) return undefined;
  const properties = s.properties as Record<string, unknown>;
  const nested = new Map<string, string[]>();
  if (depth === 0) {
    for (const [name, property] of Object.entries(properties)) {
      let p = property as Json;
      while (p && typeof p.$ref === 'string') p = resolve(p.$ref) as Json;
      if (p?.type === 'array') {
        const inner = offeredBy(p.items, resolve, 1);
        if (inner) nested.set(name, inner.top);
      }
    }
  }
  return { top: Object.keys(properties), nested };
}

/** A schema with every `required` list removed (what fields= may leave out), refs resolved. */
function relaxed(schema: unknown, resolve: (id: string) => unknown): unknown {
  let s = schema as Json | undefined;
  while (s && typeof s.$ref === 'string') s = resolve(s.$ref) as Json | undefined;
  if (!s || typeof s !== 'object') return s;
  const out: Json = {};
  for (const [key, value] of Object.entries(s)) {
    if (key === 'required' || key === '$id' || key === 'headers' || key === 'examples') continue;
    if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, relaxed(v, resolve)]));
    else if (key === 'items') out.items = relaxed(value, resolve);
    else if (key === 'anyOf' || key === 'oneOf') out[key] = (value as unknown[]).map((v) => relaxed(v, resolve));
    else out[key] = value;
  }
  return out;
}

const asked = new WeakMap<FastifyRequest, { top: Map<string, Set<string> | null> }>();

/** Every name a route offers: its properties, then `list.property` for the items of each list. */
const namesOf = (o: Offered) => [...o.top, ...[...o.nested].flatMap(([n, inner]) => inner.map((f) => `${n}.${f}`))];
const describe = (o: Offered) => namesOf(o).join(', ');

function parseFields(text: string, offered: Offered): { top: Map<string, Set<string> | null>; details: ErrorDetail[] } {
  const top = new Map<string, Set<string> | null>();
  const details: ErrorDetail[] = [];
  const items = text.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) details.push({ field: 'fields', invalid: 'Write fields as names separated by commas, with no empty name.' });
  for (const item of items.filter(Boolean)) {
    const dot = item.indexOf('.');
    const name = dot < 0 ? item : item.slice(0, dot);
    const sub = dot < 0 ? undefined : item.slice(dot + 1);
    const known = sub === undefined ? offered.top.includes(name) : (offered.nested.get(name)?.includes(sub) ?? false);
    if (!known) {
      details.push({ field: 'fields', enum: `Unknown field "${item}". Fields: ${describe(offered)}.` });
      continue;
    }
    if (sub === undefined) top.set(name, null);
    else if (top.get(name) !== null) top.set(name, (top.get(name) ?? new Set<string>()).add(sub));
  }
  return { top, details };
}

function pick(value: unknown, top: Map<string, Set<string> | null>): unknown {
  if (Array.isArray(value)) return value.map((v) => pick(v, top));
  if (!value || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value as Json)) {
    if (!top.has(key)) continue;
    const inner = top.get(key);
    out[key] = inner && Array.isArray(v) ? v.map((item) => pick(item, new Map([...inner].map((f) => [f, null])))) : v;
  }
  return out;
}

function document(route: RouteOptions, app: FastifyInstance) {
  const config = route.config as { scope?: string } | undefined;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!config?.scope || !methods.includes('GET') || !route.schema?.response) return;
  const response = route.schema.response as Record<number, TSchema>;
  const resolve = (id: string) => app.getSchema(id.replace(/^#\/components\/schemas\//, ''));
  const offered = offeredBy(response[200], resolve);
  if (!offered) return;
  (route.config as { fieldsOffered?: Offered }).fieldsOffered = offered;
  const description = `Sparse fieldset: only these properties, comma-separated: ${describe(offered)}. \`x.y\` keeps only y of each item of x; an unknown name is 400.`;
  const query = route.schema.querystring as Json | undefined;
  const names = namesOf(offered);
  const name = `\\s*(${names.map((n) => n.replace(/\./g, '\\.')).join('|')})\\s*`;
  // No example: Swagger UI's "Try it out" fills an optional parameter in with its example, so every
  // try would have asked for two fields only.
  const property = Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: `^${name}(,${name})*$`, description }));
  route.schema.querystring = {
    ...(query ?? Type.Object({}, { additionalProperties: false })),
    properties: { ...((query?.properties as Json) ?? {}), fields: property },
  };
  // With fields= any property may be left out: the answer is the full schema or the relaxed one.
  const full = response[200];
  // Only the full form goes through the route's serializer (a projection has its own, above).
  const served = { ...full, headers: undefined } as TSchema;
  response[200] = servedBy(
    {
      anyOf: [served, relaxed(full, resolve)],
      description: (full as Json).description,
      headers: (full as Json).headers,
    } as never,
    served,
  );
}

export const fieldsPlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onRoute', (route) => document(route, app));
  // Before validation: a bad name is reported by name (the schema's pattern would only say it does not match).
  // Callback hooks, not async ones: they run on every API GET, and most have no `fields` to read.
  app.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const offered = (request.routeOptions.config as { fieldsOffered?: Offered }).fieldsOffered;
    if (!offered) return done();
    const qs = queryStringOf(request.url);
    // A key decodes to `fields` only from that text or from percent-escapes: without either, none does.
    if (!qs.includes('fields') && !qs.includes('%')) return done();
    const given = parseQueryString(qs).params.filter((p) => p.key === 'fields');
    if (given.length === 0) return done();
    if (given.length > 1) return done(badRequest([{ field: 'fields', invalid: 'Given more than once; takes a single value.' }], 'Request validation failed.'));
    const { top, details } = parseFields(given[0]!.value, offered);
    if (details.length > 0) return done(badRequest(details, 'Request validation failed.'));
    asked.set(request, { top });
    // The projected answer no longer has every property the full schema requires.
    reply.serializer((payload: unknown) => JSON.stringify(payload));
    done();
  });
  app.addHook('preSerialization', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, value?: unknown) => void) => {
    const fields = asked.get(request);
    if (!fields || reply.statusCode !== 200) return done(null, payload);
    const etag = reply.getHeader('etag');
    if (typeof etag === 'string' && etag.endsWith('"')) {
      const key = JSON.stringify([...fields.top].map(([k, v]) => [k, v && [...v]]));
      reply.header('ETag', `${etag.slice(0, -1)}-f${createHash('sha256').update(key).digest('base64url').slice(0, 12)}"`);
    }
    done(null, pick(payload, fields.top));
  });
});
