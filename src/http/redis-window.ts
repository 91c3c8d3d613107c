import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

// Fixed-window counters in Redis, shared by every instance that points at the same server: the same
// windows as FixedWindowCounter (http/fixed-window.ts), so N instances allow the budget once, not N
// times. One round trip per count (a Lua script: INCR, and the window's expiry set by the first).

/** Keys of this service; a Redis shared with other software keeps them apart. */
const PREFIX = 'music-catalogue:rate:';

const TAKE = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}`;

type WithTake = Redis & { mcTake(key: string, windowMs: number): Promise<[number, number]> };

export interface RedisLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * A connection for the counters. A command waits at most a second: when Redis cannot be reached the
 * limits are skipped (fail open: rate limiting protects the service, it must not stop it), and the
 * outage's start and end are logged once each.
 */
export function openRedis(url: string, log: RedisLog): WithTake {
  // Loaded only when REDIS_URL is set (as pg is only for PostgreSQL): most starts never need it.
  const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, { maxRetriesPerRequest: 1, commandTimeout: 1000, connectionName: 'music-catalogue' }) as WithTake;
  redis.defineCommand('mcTake', { numberOfKeys: 1, lua: TAKE });
  let down = false;
  redis.on('error', (err: Error) => {
    if (!down) log.warn({ error: err.message }, 'Redis (REDIS_URL) cannot be reached: rate limits are not enforced until it is back');
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info({}, 'Redis (REDIS_URL) reachable again: rate limits enforced');
    down = false;
  });
  return redis;
}

export class RedisWindowCounter {
  constructor(
    private readonly redis: WithTake,
    private readonly name: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  private key(key: string) {
    return `${PREFIX}${this.name}:${key}`;
  }

  /** Counts one event; its count in the current window and the milliseconds left of that window. */
  async take(key: string): Promise<{ current: number; ttl: number }> {
    const [current, ttl] = await this.redis.mcTake(this.key(key), this.windowMs);
    return { current, ttl };
  }

  /** Seconds until the key may try again; 0 while it is under the limit. */
  async blockedFor(key: string): Promise<number> {
    const k = this.key(key);
    const [[, count], [, ttl]] = (await this.redis.multi().get(k).pttl(k).exec()) as [[unknown, string | null], [unknown, number]];
    if (count === null || Number(count) < this.limit || ttl <= 0) return 0;
    return Math.max(1, Math.ceil(ttl / 1000));
  }
}
