// The deterministic dataset: seeded once through `music-catalogue seed` into a pristine SQLite file
// (reused while its manifest matches the parameters), then copied for each run so runs start alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { apiSeed } from './api-seed.mjs';

/** The CLI as it ships (`npm run build`: tsc, then one bundled file). */
export const CLI = 'dist/music-catalogue.mjs';
/** The same code as tsc emits it, one file per module: profiles attribute time to packages by file. */
export const UNBUNDLED_CLI = 'dist/src/cli.js';

export function seedParams(o) {
  return { users: o.users, artists: o.artists, albumsPerArtist: o.albumsPerArtist, songsPerAlbum: o.songsPerAlbum, seed: o.seed };
}

function seedArgs(p) {
  return ['--users', p.users, '--artists', p.artists, '--albums-per-artist', p.albumsPerArtist, '--songs-per-album', p.songsPerAlbum, '--seed', p.seed].map(
    String,
  );
}

export function seedCommandAvailable() {
  const r = spawnSync(process.execPath, [CLI, 'seed', '--help'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0;
}

function runSeed(databaseUrl, params, force, log) {
  const args = [CLI, 'seed', ...seedArgs(params), ...(force ? ['--force'] : [])];
  log(`seeding: DATABASE_URL=${databaseUrl.replace(/\/\/[^@/]*@/, '//***@')} node ${args.join(' ')}`);
  const started = Date.now();
  // stdio inherited: the seed command shows its own progress on a terminal. Bounded at 15 minutes.
  execFileSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }, timeout: 900_000 });
  return (Date.now() - started) / 1000;
}

function readManifest(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

const sameParams = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The pristine SQLite dataset for these options: { file, manifest }. Seeds it if missing or stale. */
export async function sqliteDataset(o, resultsDir, log) {
  const params = seedParams(o);
  const name = `dataset-u${params.users}-a${params.artists}x${params.albumsPerArtist}x${params.songsPerAlbum}-s${params.seed}`;
  const file = join(resultsDir, `${name}.db`);
  const manifestPath = `${file}.manifest.json`;
  const manifest = readManifest(manifestPath);
  const reusable = manifest && sameParams(manifest.params, params) && existsSync(file);
  if (reusable && (manifest.method !== 'api' || !seedCommandAvailable())) {
    log(`dataset: reusing ${file} (seeded ${manifest.seededAt} in ${manifest.seedSeconds} s)`);
    return { file, manifest };
  }
  for (const suffix of ['', '-wal', '-shm', '.manifest.json']) rmSync(file + suffix, { force: true });
  const started = Date.now();
  let actual = params;
  if (seedCommandAvailable()) runSeed(`sqlite:${file}`, params, false, log);
  else actual = await apiSeed(`sqlite:${file}`, params, log);
  const seedSeconds = (Date.now() - started) / 1000;
  const fresh = { params, method: actual.method ?? 'seed', actual, seededAt: new Date().toISOString(), seedSeconds };
  writeFileSync(manifestPath, JSON.stringify(fresh, null, 2));
  return { file, manifest: fresh };
}

/** A working copy of the pristine file, so that the writes of one run do not carry into the next. */
export function workingCopy(pristine, dir, name) {
  mkdirSync(dir, { recursive: true });
  const target = join(dir, name);
  for (const suffix of ['', '-wal', '-shm']) {
    rmSync(target + suffix, { force: true });
    if (existsSync(pristine + suffix)) copyFileSync(pristine + suffix, target + suffix);
  }
  return target;
}

/** What a PostgreSQL database holds of the catalogue's tables (row counts), or null when it has none. */
async function postgresContents(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const exists = (await client.query("SELECT to_regclass('artists') IS NOT NULL AS artists, to_regclass('users') IS NOT NULL AS users")).rows[0];
    if (!exists.artists) return null;
    const count = async (table) => Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    return { users: exists.users ? await count('users') : 0, artists: await count('artists'), albums: await count('albums'), songs: await count('songs') };
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL is seeded in place when it is empty. A database already seeded with these parameters (by
 * this or another worktree: the manifest is kept beside each worktree's results) is used as it is; one
 * holding anything else is refused rather than added to. The benchmark's own writes stay there: a few
 * thousand songs on one album (the users it PATCHes are put back).
 */
export async function postgresDataset(o, url, resultsDir, log) {
  const params = seedParams(o);
  const key = createHash('sha256').update(url).digest('hex').slice(0, 12);
  const manifestPath = join(resultsDir, `postgres-${key}.db.manifest.json`);
  const manifest = readManifest(manifestPath);
  if (manifest && sameParams(manifest.params, params) && (manifest.method !== 'api' || !seedCommandAvailable())) {
    log(`postgres dataset: reusing (seeded ${manifest.seededAt})`);
    return manifest;
  }
  const held = await postgresContents(url);
  const empty = !held || (held.users === 0 && held.artists === 0);
  if (!empty) {
    const albums = params.artists * params.albumsPerArtist;
    const seeded = held.users === params.users && held.artists === params.artists && held.albums === albums && held.songs >= albums * params.songsPerAlbum;
    if (!seeded) {
      throw new Error(
        `the PostgreSQL database already holds other data (${Object.entries(held)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')}), not this dataset: give --postgres an empty database (createdb), or drop this one`,
      );
    }
    log('postgres dataset: already seeded with these parameters; using it');
    const adopted = { params, method: 'seed', actual: params, seededAt: 'before this run (found in the database)', seedSeconds: 0 };
    writeFileSync(manifestPath, JSON.stringify(adopted, null, 2));
    return adopted;
  }
  const started = Date.now();
  let actual = params;
  if (seedCommandAvailable()) runSeed(url, params, false, log);
  else actual = await apiSeed(url, params, log);
  const seedSeconds = (Date.now() - started) / 1000;
  const fresh = { params, method: actual.method ?? 'seed', actual, seededAt: new Date().toISOString(), seedSeconds };
  writeFileSync(manifestPath, JSON.stringify(fresh, null, 2));
  return fresh;
}

export function gitDescribe() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
