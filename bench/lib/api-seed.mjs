// TEMPORARY, until `music-catalogue seed` is on main: a small catalogue created through the HTTP API,
// so the catalogue scenarios can run. No users. The dataset manifest marks it, and it is replaced by a
// real seed as soon as the command exists.
import { startProcess, stopProcess } from './procs.mjs';
import { CLI } from './dataset.mjs';

const TOKEN = 'bench-api-seed-admin-token-0000';

export async function apiSeed(databaseUrl, params, log) {
  const artists = Math.min(params.artists, 100);
  log(`seed command missing: creating ${artists} artists x ${params.albumsPerArtist} albums x ${params.songsPerAlbum} songs through the API (no users)`);
  const svc = await startProcess({
    name: 'service',
    command: process.execPath,
    args: [CLI, 'serve'],
    env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', CATALOGUE_ADMIN_TOKEN: TOKEN, HOST: '127.0.0.1' },
    readyPath: '/ready',
  });
  const post = async (path, body) => {
    const res = await fetch(svc.base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  try {
    for (let a = 1; a <= artists; a++) {
      const artist = await post('/artists', { name: `Artist ${a}`, image: `https://img.example.com/artists/${a}.jpg` });
      await Promise.all(
        Array.from({ length: params.albumsPerArtist }, async (_, b) => {
          const album = await post(`/artists/${artist.id}/albums`, {
            name: `Album ${a}-${b + 1}`,
            year: 1960 + ((a + b) % 60),
            image: `https://img.example.com/albums/${a}-${b + 1}.jpg`,
          });
          for (let s = 1; s <= params.songsPerAlbum; s++) {
            await post(`/artists/${artist.id}/albums/${album.id}/songs`, {
              name: `Song ${s}`,
              time: `0${(s % 7) + 2}:${String((s * 13) % 60).padStart(2, '0')}`,
            });
          }
        }),
      );
    }
  } finally {
    await stopProcess(svc);
  }
  return { ...params, artists, users: 0, method: 'api' };
}
