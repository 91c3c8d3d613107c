import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('has production defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', databaseUrl: 'sqlite:./data/catalogue.db', logLevel: 'info', bodyLimit: 1048576 });
    expect(config).toMatchObject({ idempotencyLeaseSeconds: 45, redisUrl: undefined, trustProxy: false, pgIdleMs: 60_000 });
    expect(config.testOnlyKillAfterKeyedWrites).toBe(0); // the crash tests' self-kill is off
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db.internal:5432/cat',
      LOG_LEVEL: 'debug',
      CATALOGUE_ADMIN_TOKEN: 'a-long-enough-admin-token',
      RATE_LIMIT_PER_MINUTE: '0',
      PG_POOL_SIZE: '25',
      PG_CONNECT_TIMEOUT_MS: '750',
      PG_IDLE_MS: '15000',
      IDEMPOTENCY_LEASE_SECONDS: '60',
      REDIS_URL: 'redis://:secret@cache.internal:6379/2',
      TRUST_PROXY: '10.0.0.10',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db.internal:5432/cat',
      logLevel: 'debug',
      adminToken: 'a-long-enough-admin-token',
      rateLimitPerMinute: 0,
      pgPoolSize: 25,
      pgConnectTimeoutMs: 750,
      pgIdleMs: 15_000,
      idempotencyLeaseSeconds: 60,
      redisUrl: 'redis://:secret@cache.internal:6379/2',
      trustProxy: ['10.0.0.10'],
    });
  });

  it('creates the default ./data directory, and a directory DATABASE_URL names only with SQLITE_CREATE_DIRECTORY=on', () => {
    expect(loadConfig({}).sqliteCreateDirectory).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'sqlite:./data/catalogue.db' }).sqliteCreateDirectory).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'sqlite:/x/y.db', SQLITE_CREATE_DIRECTORY: 'on' }).sqliteCreateDirectory).toBe(true);
    expect(() => loadConfig({ SQLITE_CREATE_DIRECTORY: 'yes' })).toThrow('SQLITE_CREATE_DIRECTORY must be one of on, off, got "yes"');
  });

  it('refuses an in-memory database with several workers, and a dotted HOST that is no IPv4 address', () => {
    for (const WORKERS of ['2', 'auto']) {
      const env = { DATABASE_URL: 'sqlite::memory:', WORKERS, RATE_LIMIT_PER_MINUTE: '0' };
      if (WORKERS === 'auto' && availableParallelism() === 1) continue;
      expect(() => loadConfig(env)).toThrow(/^WORKERS=(2|auto) cannot share DATABASE_URL=sqlite::memory:/);
    }
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:', WORKERS: '1' }).workers).toBe(1);
    for (const HOST of ['999.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.256'])
      expect(() => loadConfig({ HOST })).toThrow(`HOST is not a valid IPv4 address, got "${HOST}"`);
    expect(loadConfig({ HOST: '10.0.0.1' }).host).toBe('10.0.0.1');
  });

  it('runs one worker by default, one per core with WORKERS=auto and rate limiting off', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WORKERS: 'auto', RATE_LIMIT_PER_MINUTE: '0' }).workers).toBe(availableParallelism());
    expect(loadConfig({ WORKERS: '3', RATE_LIMIT_PER_MINUTE: '0' }).workers).toBe(3);
  });

  it.each([
    ['PORT', 'abc', /^PORT must be an integer/],
    ['PORT', '70000', /^PORT must be an integer between 0 and 65535/],
    ['DATABASE_URL', 'mysql://x', /^DATABASE_URL must be/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of/],
    ['CATALOGUE_ADMIN_TOKEN', 'short', /^CATALOGUE_ADMIN_TOKEN must be at least 16/],
    ['RATE_LIMIT_PER_MINUTE', '-1', /^RATE_LIMIT_PER_MINUTE must be an integer/],
    ['CORS_ORIGINS', 'not an origin', /^CORS_ORIGINS/],
    ['PG_POOL_SIZE', '0', /^PG_POOL_SIZE must be an integer between 1 and 1000/],
    ['PG_CONNECT_TIMEOUT_MS', '10', /^PG_CONNECT_TIMEOUT_MS must be an integer between 100 and 60000/],
    ['PG_IDLE_MS', '99', /^PG_IDLE_MS must be an integer between 100 and 3600000/],
    ['PG_IDLE_MS', '6e4', /^PG_IDLE_MS must be an integer between 100 and 3600000/],
    ['WORKERS', '0', /^WORKERS must be auto or an integer from 1 to 256/],
    ['WORKERS', 'many', /^WORKERS must be auto or an integer from 1 to 256/],
    ['WORKERS', '2', /^WORKERS=2 needs REDIS_URL \(shared rate limits\) or RATE_LIMIT_PER_MINUTE=0/],
    ['IDEMPOTENCY_LEASE_SECONDS', '0', /^IDEMPOTENCY_LEASE_SECONDS must be an integer between 1 and 3600/],
    ['TEST_ONLY_KILL_AFTER_KEYED_WRITES', '0x10', /^TEST_ONLY_KILL_AFTER_KEYED_WRITES must be an integer between 0 and 1000000/],
    ['TEST_ONLY_KILL_AFTER_KEYED_WRITES', '1e1', /^TEST_ONLY_KILL_AFTER_KEYED_WRITES must be an integer/],
    ['TEST_ONLY_KILL_AFTER_KEYED_WRITES', '-1', /^TEST_ONLY_KILL_AFTER_KEYED_WRITES must be an integer/],
    ['REDIS_URL', 'http://cache.internal', /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL$/],
    ['REDIS_URL', 'redis://:pw@[bad', /^REDIS_URL is not a valid redis:\/\/ or rediss:\/\/ URL$/],
  ])('rejects %s=%s with one line naming the variable', (name, value, pattern) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(pattern);
  });
});
