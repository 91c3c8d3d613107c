// The peer: json-server (pinned devDependency) on the same data, flattened into its db.json:
// the first 100,000 users and the catalogue of the first 1,000 artists (100,000 songs at 10x10).
import { existsSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';

/** A row as the API shows it: without its version, nor the collation keys stored beside its names (src/db/collation.ts). */
const withoutVersion = ({ version: _v, ...rest }) => Object.fromEntries(Object.entries(rest).filter(([column]) => !/_(key|fold)$/.test(column)));

function tableExists(db, name) {
  return !!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name);
}

/** Writes the peer's db.json from the pristine SQLite dataset (once per dataset). */
export function buildPeerDb(sqliteFile, target, { peerUsers, peerArtists }, log) {
  if (existsSync(target)) return;
  log(`peer: flattening ${peerUsers} users and ${peerArtists} artists' catalogue into ${target}`);
  const db = new Database(sqliteFile, { readonly: true });
  try {
    const users = tableExists(db, 'users')
      ? db
          .prepare('SELECT * FROM users ORDER BY id LIMIT ?')
          .all(peerUsers)
          .map((u) => ({ ...u, id: String(u.id) }))
      : [];
    const artists = db.prepare('SELECT * FROM artists ORDER BY id LIMIT ?').all(peerArtists);
    const lastArtist = artists.at(-1)?.id ?? 0;
    const albums = db.prepare('SELECT * FROM albums WHERE artist_id <= ? ORDER BY id').all(lastArtist);
    const lastAlbum = albums.at(-1)?.id ?? 0;
    const songs = db
      .prepare('SELECT s.* FROM songs s JOIN albums a ON a.id = s.album_id WHERE a.artist_id <= ? AND s.album_id <= ? ORDER BY s.id')
      .all(lastArtist, lastAlbum);
    const data = {
      users: users.map(withoutVersion),
      artists: artists.map((a) => ({ ...withoutVersion(a), id: String(a.id) })),
      albums: albums.map(({ artist_id, ...a }) => ({ ...withoutVersion(a), id: String(a.id), artistId: String(artist_id) })),
      songs: songs.map(({ album_id, ...s }) => ({ ...withoutVersion(s), id: String(s.id), albumId: String(album_id) })),
    };
    writeFileSync(target, JSON.stringify(data));
  } finally {
    db.close();
  }
}

/** The stored spelling of a country (json-server compares exactly), e.g. "Brazil" for lives_in=brazil. */
export function storedCountry(sqliteFile, lowerName) {
  const db = new Database(sqliteFile, { readonly: true });
  try {
    if (!tableExists(db, 'users')) return lowerName;
    const row = db.prepare('SELECT country FROM users WHERE lower(country) = ? LIMIT 1').get(lowerName);
    return row?.country ?? lowerName;
  } catch {
    return lowerName;
  } finally {
    db.close();
  }
}
