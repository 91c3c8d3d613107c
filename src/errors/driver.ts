import type { FastifyContextConfig } from 'fastify';
import { AppError, notFound } from './app-error.js';

// Recognising what either driver's error means, so the one handler answers 404, 409 or 503 instead of 500.

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The 409 message when a write on this route hits a unique constraint (e.g. a taken email). */
    conflict?: string;
    /** The kind a foreign-key violation on this route means is missing (it was deleted meanwhile): the 404 names it. */
    references?: string;
  }
}

interface DriverError {
  code?: unknown;
}

/** A row refers to a parent that does not exist (SQLite SQLITE_CONSTRAINT_FOREIGNKEY, PostgreSQL 23503). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as DriverError | null)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}

/** A unique constraint was hit (SQLite SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY, PostgreSQL 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as DriverError | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  'SQLITE_IOERR',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  // Class 08 is "connection exception": besides PostgreSQL's own, PgBouncer reports losing or failing
  // to reach its server as FATAL 08P01 ("server conn crashed?", "server login has been failing").
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('SQLITE_IOERR') || /^08[0-9A-Z]{3}$/.test(e.code))) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  // "timeout expired": node-postgres' client gave up opening its connection (PG_CONNECT_TIMEOUT_MS).
  return /Connection terminated|timeout exceeded when trying to connect|connection timeout|^timeout expired$|Client has encountered a connection error/i.test(
    message,
  );
}

/** A constraint violation as the answer the route declared for it; undefined for any other error. */
export function driverError(error: unknown, route: FastifyContextConfig | undefined): AppError | undefined {
  if (isUniqueViolation(error)) return new AppError('CONFLICT', route?.conflict ?? 'Conflict with stored data.');
  if (isForeignKeyViolation(error)) return notFound(route?.references ?? 'Referenced resource');
  return undefined;
}
