import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { ErrorBody } from '../errors/index.js';
import { noneMatchHits, taggedBody } from './etag.js';
import { addRequestHeaders, addResponse } from './route-schema.js';
import { needsToken } from '../auth/scopes.js';

// ETags and conditional requests for every API route (routes with a scope), users included:
// - a 200 GET gets an ETag: the one the handler set (a stored resource's version tag), else a hash
//   of the body and the headers that describe it (paging), so lists and composites revalidate too;
// - If-None-Match matching it turns the answer into 304 with the ETag and no body;
// - the OpenAPI document describes ETag, If-None-Match, If-Match, 304 and 412 on the routes concerned.

/** Headers that are part of a list's meaning: a change in them must change the tag. */
const DESCRIBING_HEADERS = ['x-total-count', 'link'];

const ETagHeader = Type.String({
  maxLength: 100,
  description: 'Strong entity tag of this representation; send it back in If-None-Match (GET) or If-Match (PATCH, DELETE).',
});

function conditional(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload;
  if (!needsToken(request.routeOptions.config)) return payload;
  let etag = reply.getHeader('etag');
  if (typeof etag !== 'string') {
    if (typeof payload !== 'string') return payload;
    const tagged = taggedBody(
      payload,
      DESCRIBING_HEADERS.map((h) => String(reply.getHeader(h) ?? '')),
    );
    etag = tagged.etag;
    reply.header('ETag', etag);
    // The bytes it was hashed from are the ones sent: not encoded from the text again.
    payload = tagged.bytes;
  }
  const condition = request.headers['if-none-match'];
  if (condition !== undefined && noneMatchHits(condition, etag)) {
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    return '';
  }
  return payload;
}

function withHeaders(schema: TSchema | undefined, headers: Record<string, TSchema>): TSchema | undefined {
  if (!schema) return schema;
  return { ...schema, headers: { ...(schema.headers as Record<string, TSchema> | undefined), ...headers } };
}

function document(route: RouteOptions) {
  if (!needsToken(route.config) || !route.schema) return;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const response = route.schema.response as Record<number, TSchema> | undefined;
  if (methods.includes('GET') || methods.includes('PATCH')) {
    if (response?.[200]) response[200] = withHeaders(response[200], { ETag: ETagHeader })!;
  }
  if (methods.includes('GET')) {
    addRequestHeaders(route, {
      'if-none-match': Type.Optional(
        Type.String({ maxLength: 16384, description: 'An ETag from an earlier answer: 304 without a body if it is still current.' }),
      ),
    });
    addResponse(route, 304, Type.Null({ description: 'Not modified: the If-None-Match ETag is current. No body.', headers: { ETag: ETagHeader } }));
  }
  if (methods.includes('PATCH') || methods.includes('DELETE')) {
    // A route that describes If-Match itself (a resource without ETags) keeps its own description.
    const declared = (route.schema.headers as { properties?: Record<string, unknown> } | undefined)?.properties?.['if-match'];
    if (!declared)
      addRequestHeaders(route, {
        'if-match': Type.Optional(
          Type.String({
            maxLength: 16384,
            description: 'The ETag the change is based on (or `*`): if the resource has changed since, nothing is written and the answer is 412.',
          }),
        ),
      });
    addResponse(route, 412, Type.Ref(ErrorBody, { description: 'If-Match does not match the current ETag; nothing was changed.' }));
  }
}

async function conditionalPlugin(app: FastifyInstance) {
  app.addHook('onRoute', document);
  // A callback hook: it runs on every response and has nothing to wait for.
  app.addHook('onSend', (request, reply, payload, done) => done(null, conditional(request, reply, payload)));
}

export default fp(conditionalPlugin, { name: 'conditional' });
