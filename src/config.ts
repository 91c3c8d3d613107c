import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';

// Configuration is read from the environment once, validated, and frozen.
// No other module reads process.env.

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type SqliteSynchronous = 'normal' | 'full' | 'extra';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly logLevel: LogLevel;
  /** Accepted as an admin token in addition to stored tokens (bootstrap). */
  readonly adminToken: string | undefined;
  /** Requests per minute per token (or per IP without one); 0 turns limiting off. */
  readonly rateLimitPerMinute: number;
  /** Bytes of repeated GET answers kept in memory (http/response-cache.ts); 0 turns the cache off. */
  readonly responseCacheBytes: number;
  /** Maximum request body in bytes. */
  readonly bodyLimit: number;
  /** How long an Idempotency-Key is remembered, in seconds. */
  readonly idempotencyTtlSeconds: number;
  /** How long a request's reservation of its Idempotency-Key holds without renewal (a dead request's key is free after it). */
  readonly idempotencyLeaseSeconds: number;
  /**
   * Crash tests only, 0 (off) otherwise: the process SIGKILLs itself right after the n-th write made
   * under an Idempotency-Key has committed, before that request's answer is sent.
   */
  readonly testOnlyKillAfterKeyedWrites: number;
  /**
   * Whether a SQLite file's missing directory is created. On for the default ./data/; off for a path
   * DATABASE_URL names unless SQLITE_CREATE_DIRECTORY=on: a typo in it would otherwise start an empty service.
   */
  readonly sqliteCreateDirectory: boolean;
  /** SQLite `synchronous` level: `normal` survives a process crash, `full` also a power loss. */
  readonly sqliteSynchronous: SqliteSynchronous;
  /** PostgreSQL connection pool size. */
  readonly pgPoolSize: number;
  /** Repeated queries run as named (server-side) prepared statements on PostgreSQL. */
  readonly pgPreparedStatements: boolean;
  /** How long a request waits for a new PostgreSQL connection before failing with 503, in milliseconds. */
  readonly pgConnectTimeoutMs: number;
  /**
   * How long an idle pooled PostgreSQL connection is kept, in milliseconds. A new connection plans
   * every statement again (its first five runs each) and loads the catalogue into a fresh server
   * process; an instance sharing max_connections with others gives slots back sooner with less.
   */
  readonly pgIdleMs: number;
  /**
   * How often each process publishes the events committed on PostgreSQL (numbers them, docs/events.md)
   * when no reader has, in milliseconds: how long an event may wait before streams and webhooks see it.
   */
  readonly pgSettleMs: number;
  /** Allowed CORS origins; empty means CORS is closed. */
  readonly corsOrigins: readonly string[];
  /** Time allowed for in-flight requests on shutdown, in milliseconds. */
  readonly shutdownTimeoutMs: number;
  /** Processes serving requests (one per core with WORKERS=auto); 1 serves from this process. */
  readonly workers: number;
  /** Time a client has to send a whole request (headers and body), in milliseconds. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open, in milliseconds. */
  readonly keepAliveTimeoutMs: number;
  /**
   * Which proxies' X-Forwarded-For to believe (Fastify's trustProxy): false (none, the TCP peer is the
   * client), a hop count, or a list of proxy addresses/CIDR ranges. The client address it yields is what
   * per-address limits count.
   */
  readonly trustProxy: false | number | readonly string[];
  /** Redis holding the rate-limit counters, shared by every instance; unset: each process counts alone. */
  readonly redisUrl: string | undefined;
  /** Events older than this many days are deleted (a minute after start, then hourly); 0 keeps them for ever. */
  readonly eventsRetentionDays: number;
  /** How often streams and webhook deliveries look for events other processes wrote, in milliseconds. */
  readonly eventsPollMs: number;
  /** Interval of the `: heartbeat` comment on event streams, in milliseconds. */
  readonly eventsHeartbeatMs: number;
  /** Webhooks may target loopback, private and link-local addresses (off: refused, see docs/events.md). */
  readonly webhookAllowPrivate: boolean;
  /** Failed attempts at one event before a webhook is marked failing. */
  readonly webhookMaxAttempts: number;
  /** First retry delay; each further one doubles, up to an hour (milliseconds). */
  readonly webhookRetryBaseMs: number;
  /** Time a receiver has to answer one delivery, in milliseconds. */
  readonly webhookTimeoutMs: number;
  /** Each worker holds the users in memory for the lists it answers exactly (src/modules/users/index/); off: every users list is SQL. */
  readonly usersIndex: boolean;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const SYNC_LEVELS: readonly SqliteSynchronous[] = ['normal', 'full', 'extra'];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  const value = Number(raw.trim());
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase() as T;
  if (!allowed.includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return value;
}

function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL?.trim() || 'sqlite:./data/catalogue.db';
  if (raw === 'sqlite::memory:') return raw;
  if (/^sqlite:.+/.test(raw)) return raw;
  if (/^postgres(ql)?:\/\/.+/.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError(`DATABASE_URL is not a valid postgres:// URL`);
    }
    return raw;
  }
  throw new ConfigError(`DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://..., got "${raw}"`);
}

function adminToken(env: Env): string | undefined {
  const raw = env.CATALOGUE_ADMIN_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || /\s/.test(raw)) {
    throw new ConfigError('CATALOGUE_ADMIN_TOKEN must be at least 16 characters without spaces');
  }
  return raw;
}

function host(env: Env): string {
  const raw = env.HOST?.trim() || '127.0.0.1';
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(raw)) throw new ConfigError(`HOST is not a valid host, got "${raw}"`);
  // Digits and dots only is meant as an IPv4 address (a resolver would try it as a name and fail late).
  if (/^[\d.]+$/.test(raw) && isIP(raw) !== 4) throw new ConfigError(`HOST is not a valid IPv4 address, got "${raw}"`);
  return raw;
}

function corsOrigins(env: Env): string[] {
  const raw = env.CORS_ORIGINS?.trim();
  if (!raw) return [];
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of origins) {
    if (origin === '*') continue;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new ConfigError(`CORS_ORIGINS must be a comma-separated list of origins or *, got "${origin}"`);
    }
    if (url.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS entries must be bare origins like https://example.com, got "${origin}"`);
    }
  }
  return origins;
}

/**
 * WORKERS: a count, or `auto` for one per core. Several workers with in-process rate-limit and
 * failed-authentication counters would multiply every budget by the number of workers, so they
 * need the counters shared (REDIS_URL) or rate limiting off (RATE_LIMIT_PER_MINUTE=0, behind a
 * gateway that limits).
 */
function workers(env: Env, limits: { perMinute: number; sharedThrough: string | undefined }, database: string): number {
  const raw = env.WORKERS?.trim() || '1';
  const count = raw === 'auto' ? availableParallelism() : Number(raw);
  if (!/^(auto|[0-9]+)$/.test(raw) || !Number.isInteger(count) || count < 1 || count > 256) {
    throw new ConfigError(`WORKERS must be auto or an integer from 1 to 256, got "${raw}"`);
  }
  // Each worker would open a database of its own, empty but for what it wrote: the admin token the
  // primary created and printed would be in none of them.
  if (count > 1 && database === 'sqlite::memory:') {
    throw new ConfigError(`WORKERS=${raw} cannot share DATABASE_URL=sqlite::memory: (each worker would have a database of its own); use WORKERS=1 or a file`);
  }
  if (count > 1 && limits.perMinute > 0 && !limits.sharedThrough) {
    throw new ConfigError(
      `WORKERS=${raw} needs REDIS_URL (shared rate limits) or RATE_LIMIT_PER_MINUTE=0: each worker would count requests on its own, multiplying the limit by ${count}`,
    );
  }
  return count;
}

/** Names proxy-addr (Fastify's trustProxy) accepts for address ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function trustProxy(env: Env): false | number | readonly string[] {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw || raw.toLowerCase() === 'false') return false;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 32) throw new ConfigError(`TRUST_PROXY as a hop count must be between 1 and 32, got "${raw}"`);
    return hops;
  }
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const version = isIP(address);
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (!PROXY_RANGE_NAMES.has(entry) && (version === 0 || !prefixOk || extra !== undefined)) {
      throw new ConfigError(
        `TRUST_PROXY must be a hop count or a comma-separated list of proxy addresses, CIDR ranges or loopback/linklocal/uniquelocal, got "${entry}"`,
      );
    }
  }
  return Object.freeze(entries);
}

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('REDIS_URL is not a valid redis:// or rediss:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const rateLimitPerMinute = integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, 10_000_000);
  const redis = redisUrl(env);
  const database = databaseUrl(env);
  return Object.freeze({
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: host(env),
    databaseUrl: database,
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    adminToken: adminToken(env),
    rateLimitPerMinute,
    responseCacheBytes: integer(env, 'RESPONSE_CACHE_MB', 16, 0, 4096) * 1024 * 1024,
    bodyLimit: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 24 * 3600, 1, 30 * 24 * 3600),
    idempotencyLeaseSeconds: integer(env, 'IDEMPOTENCY_LEASE_SECONDS', 45, 1, 3600),
    testOnlyKillAfterKeyedWrites: integer(env, 'TEST_ONLY_KILL_AFTER_KEYED_WRITES', 0, 0, 1_000_000),
    sqliteCreateDirectory: oneOf(env, 'SQLITE_CREATE_DIRECTORY', ['on', 'off'] as const, env.DATABASE_URL?.trim() ? 'off' : 'on') === 'on',
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', SYNC_LEVELS, 'normal'),
    pgPoolSize: integer(env, 'PG_POOL_SIZE', 10, 1, 1000),
    pgPreparedStatements: oneOf(env, 'PG_PREPARED_STATEMENTS', ['on', 'off'] as const, 'on') === 'on',
    pgConnectTimeoutMs: integer(env, 'PG_CONNECT_TIMEOUT_MS', 2000, 100, 60_000),
    pgIdleMs: integer(env, 'PG_IDLE_MS', 60_000, 100, 3_600_000),
    pgSettleMs: integer(env, 'PG_SETTLE_MS', 100, 10, 60_000),
    corsOrigins: Object.freeze(corsOrigins(env)),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    workers: workers(env, { perMinute: rateLimitPerMinute, sharedThrough: redis }, database),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 600_000),
    trustProxy: trustProxy(env),
    redisUrl: redis,
    eventsRetentionDays: integer(env, 'EVENTS_RETENTION_DAYS', 30, 0, 36_500),
    eventsPollMs: integer(env, 'EVENTS_POLL_MS', 500, 10, 60_000),
    eventsHeartbeatMs: integer(env, 'EVENTS_HEARTBEAT_SECONDS', 15, 1, 3600) * 1000,
    webhookAllowPrivate: oneOf(env, 'WEBHOOK_ALLOW_PRIVATE', ['on', 'off'] as const, 'off') === 'on',
    webhookMaxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', 10, 1, 100),
    webhookRetryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 1000, 10, 3_600_000),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    usersIndex: oneOf(env, 'USERS_INDEX', ['on', 'off'] as const, 'on') === 'on',
  });
}

/** A config for tests and tools: defaults plus overrides, without reading the environment. */
export function makeConfig(overrides: Partial<Config> = {}): Config {
  return Object.freeze({ ...loadConfig({}), ...overrides });
}
