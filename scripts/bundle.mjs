// The compiled CLI (dist/src, from tsc) as one file, dist/music-catalogue.mjs: what `npm start`, the
// bin and the benchmark run. Node 20's ES module loader resolves, reads and links every module on its
// own; the service imports about a thousand (Kysely, TypeBox, Fastify and ours), and that was most of
// start to ready. One file takes the same code in one read (see README, Performance).
//
// Left out, loaded from node_modules as before: the native SQLite binding, the PostgreSQL driver
// (required only when DATABASE_URL is PostgreSQL), the Redis client (only with REDIS_URL), and the two swagger plugins, which read files of
// their own package (the docs page's assets, their package.json) relative to themselves.
//
// The code the server alone needs (Fastify, the routes, the docs plugins: src/app.ts and what it
// imports) is a chunk of its own, loaded by a dynamic import where the app is built (cluster.ts,
// cli/openapi.ts): a cluster primary only migrates and forks, and loading the server was about half
// of its time before the first fork. So dist/ holds the entry and its chunks (dist/chunks/), made anew
// by each build.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

const EXTERNAL = ['better-sqlite3', 'pg', 'pg-native', 'ioredis', '@fastify/swagger', '@fastify/swagger-ui'];

rmSync('dist/chunks', { recursive: true, force: true });
await build({
  entryPoints: { 'music-catalogue': 'dist/src/cli.js' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  // CommonJS dependencies call require() for Node's modules and the ones left out; an ES module has none.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
});
