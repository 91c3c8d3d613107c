// The service under test: started in production mode, given real stored tokens, and asked for the
// ids the scenarios address (the same dataset gives the same ids on every backend).
import { startProcess } from './procs.mjs';
import { json } from './capture.mjs';
import { CLI } from './dataset.mjs';

export const ADMIN_TOKEN = 'bench-admin-token-not-a-secret-0001';

export async function startService(name, databaseUrl, nodeFlags = [], cli = CLI, workers = '1') {
  return startProcess({
    name,
    command: process.execPath,
    args: [...nodeFlags, cli, 'serve'],
    env: {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      CATALOGUE_ADMIN_TOKEN: ADMIN_TOKEN,
      HOST: '127.0.0.1',
      WORKERS: String(workers),
      // The webhook phase's receiver listens on 127.0.0.1 (bench/lib/webhook-run.mjs).
      WEBHOOK_ALLOW_PRIVATE: 'on',
      // USERS_INDEX=off npm run bench ...: the same run without the users index, for a side-by-side figure.
      ...(process.env.USERS_INDEX ? { USERS_INDEX: process.env.USERS_INDEX } : {}),
      // SERVICE_NODE_OPTIONS='--require ...' npm run bench ...: node options for the service alone (a memory
      // sampler preloaded into each of its processes), not for the bench's own node; MALLOC_*: glibc's knobs.
      ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MALLOC_') || k === 'MEMTAG' || k === 'RESPONSE_CACHE_MB')),
    },
    readyPath: '/ready',
  });
}

/** One stored token per scope, as a real client would hold (the bootstrap token is for the operator). */
export async function createTokens(base) {
  const tokens = {};
  for (const scope of ['read', 'write', 'admin']) {
    const res = await json(base, {
      method: 'POST',
      path: '/tokens',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ scopes: [scope], name: `bench ${scope}` }),
    });
    if (res.status !== 201) throw new Error(`POST /tokens answered ${res.status}: ${res.text}`);
    tokens[scope] = res.json.token;
  }
  return tokens;
}

async function albumsOf(base, tokens, artistId) {
  const res = await json(base, { method: 'GET', path: `/artists/${artistId}/albums`, headers: { Authorization: `Bearer ${tokens.read}` } });
  if (res.status !== 200 || !res.json?.albums?.length) throw new Error(`GET /artists/${artistId}/albums answered ${res.status}: ${res.text.slice(0, 200)}`);
  return res.json.albums.map((a) => a.id);
}

/** Ids inside the part of the catalogue json-server also holds, so every side reads the same records. */
export async function discoverIds(base, tokens, artistsInPeer) {
  const artistId = Math.max(1, Math.ceil(artistsInPeer / 2));
  const albums = await albumsOf(base, tokens, artistId);
  const readPairs = [];
  const step = Math.max(1, Math.floor(artistsInPeer / 18));
  for (let i = 0; i < 18; i++) {
    const artist = Math.min(artistsInPeer, 1 + i * step);
    const ids = artist === artistId ? albums : await albumsOf(base, tokens, artist);
    // Never an artist's last album: that one takes the writes (below).
    readPairs.push([artist, ids[i % Math.max(1, ids.length - 1)]]);
  }
  // Writes go to the artist's last album, which no read scenario reads, so read answers stay the same.
  return { artistId, albumId: albums[0], writeArtistId: artistId, writeAlbumId: albums.at(-1), readPairs };
}

export async function usersAvailable(base, tokens) {
  const res = await json(base, { method: 'GET', path: '/users?size=1', headers: { Authorization: `Bearer ${tokens.admin}` } });
  return res.status === 200;
}
