import type { RouteOptions } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';

// Route-level plugins (conditional requests, idempotency) add what they handle to each route's schema
// from an onRoute hook, so validation and the OpenAPI document include it without every route
// repeating it.

/** Adds request header parameters to a route's schema, keeping any it declares. */
export function addRequestHeaders(route: RouteOptions, headers: Record<string, TSchema>) {
  const schema = (route.schema ??= {});
  const existing = schema.headers as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
  const merged = Type.Object({ ...(existing?.properties ?? {}), ...headers });
  if (existing?.required?.length) merged.required = [...new Set([...(merged.required ?? []), ...existing.required])];
  schema.headers = merged;
}

export function addResponse(route: RouteOptions, status: number, schema: TSchema) {
  const response = ((route.schema ??= {}).response ??= {}) as Record<number, TSchema>;
  response[status] ??= schema;
}
