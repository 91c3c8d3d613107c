import { defineConfig } from 'vitest/config';

// Every test file runs on SQLite. With TEST_DATABASE_URL set (a PostgreSQL server the tests may
// create schemas in) every test file runs a second time on PostgreSQL: test/helpers.ts gives each
// app its own fresh schema. test/postgres/ holds the tests that only make sense on PostgreSQL
// (several instances on one database, outages, concurrent migrations). test/scale/ runs under
// `npm run test:scale` (vitest.scale.config.ts): it starts PostgreSQL clusters and PgBouncer of its own.
const postgresUrl = process.env.TEST_DATABASE_URL;
if (process.env.CI && !postgresUrl) {
  // In CI the PostgreSQL run is part of the suite: a missing server fails, it is not skipped.
  throw new Error('CI is set but TEST_DATABASE_URL is not: .ci/run starts PostgreSQL and sets it');
}

export default defineConfig({
  test: {
    // Browser tests need Chromium: `npm run test:browser` (vitest.browser.config.ts).
    pool: 'forks',
    // Drops this run's PostgreSQL test schemas at the end (why: test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // Bounds against a hung test, not speed targets (those live in `npm run bench`): generous, because
    // machines differ several-fold in speed (the users index's random differential and hostile-input
    // tests took 17-20 s on PostgreSQL on a slow one) and a bound a slow machine misses fails a landing.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: ['test/postgres/**', 'test/browser/**', 'test/scale/**'] },
      },
      ...(postgresUrl
        ? [
            {
              extends: true as const,
              test: { name: 'postgres', include: ['test/**/*.test.ts'], exclude: ['test/browser/**', 'test/scale/**'], env: { TEST_BACKEND: 'postgres' } },
            },
          ]
        : []),
    ],
  },
});
