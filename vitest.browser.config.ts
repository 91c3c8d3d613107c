import { defineConfig } from 'vitest/config';

// `npm run test:browser`: tests that drive Debian's Chromium (/usr/bin/chromium) with playwright-core.
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
