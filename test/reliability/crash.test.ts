import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { deferred } from '../helpers.js';
import { startServerProcess, type ServerProcess } from '../process.js';

const dir = mkdtempSync(join(tmpdir(), 'mc-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'crash-test-admin-token-0123456789';
const env = { DATABASE_URL: `sqlite:${join(dir, 'catalogue.db')}`, CATALOGUE_ADMIN_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '0' };
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

interface Acked {
  artist: { id: number; name: string; image: string };
  album?: { id: number; name: string; year: number; image: string };
  /** Songs are written through the group commit (several requests share one transaction). */
  song?: { id: number; name: string; time: string };
}

/** Why each writer stopped: after the kill, the connection refused; before it, the error that says what went wrong. */
const stops: string[] = [];
const whyStopped = (err: unknown) =>
  err instanceof Error ? `${err.message}${err.cause ? ` (${err.cause instanceof Error ? err.cause.message : JSON.stringify(err.cause)})` : ''}` : String(err);

/**
 * Writes artists (and an album with a song for each) until the server stops answering; records what
 * was acknowledged in `acked` (calling `onAck` after each) and returns the number of failures.
 */
async function writer(srv: ServerProcess, n: number, acked: Acked[], onAck: () => void): Promise<number> {
  let failures = 0;
  for (let i = 0; failures === 0; i++) {
    try {
      const name = `writer ${n} artist ${i} ✓`;
      const res = await fetch(`${srv.url}/artists`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name, image: `https://img.example.com/${n}/${i}.jpg` }),
      });
      if (res.status !== 201) throw new Error(`unexpected ${res.status}: ${await res.text()}`);
      const entry: Acked = { artist: (await res.json()) as Acked['artist'] };
      acked.push(entry);
      onAck();
      const album = await fetch(`${srv.url}/artists/${entry.artist.id}/albums`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `album of ${name}`, year: 1990 + (i % 30), image: `https://img.example.com/${n}/${i}/a.jpg` }),
      });
      if (album.status !== 201) throw new Error(`unexpected ${album.status}: ${await album.text()}`);
      entry.album = (await album.json()) as Acked['album'];
      const song = await fetch(`${srv.url}/artists/${entry.artist.id}/albums/${entry.album!.id}/songs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `song of ${name}`, time: `0${i % 10}:${String(i % 60).padStart(2, '0')}` }),
      });
      if (song.status !== 201) throw new Error(`unexpected ${song.status}: ${await song.text()}`);
      entry.song = (await song.json()) as Acked['song'];
    } catch (err) {
      failures++;
      stops.push(whyStopped(err));
    }
  }
  return failures;
}

type AckedUser = { id: number; status: string; age: number; country: string; inFlight?: { status: string; age: number; country: string } };

/** Creates users and moves them (status, age, country) until the server stops answering: the summary's triggers fire in every one of these commits. */
async function userWriter(srv: ServerProcess, n: number, acked: AckedUser[]): Promise<number> {
  let failures = 0;
  for (let i = 0; failures === 0; i++) {
    try {
      const res = await fetch(`${srv.url}/users`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          first_name: ['Crash', 'crash', 'Ada'][i % 3],
          last_name: `Writer ${n}`,
          email: `crash.${n}.${i}@example.com`,
          age: 20 + (i % 50),
          status: 'active',
          country: ['Brazil', 'chile', 'Peru'][i % 3],
        }),
      });
      if (res.status !== 201) throw new Error(`unexpected ${res.status}: ${await res.text()}`);
      const user = (await res.json()) as AckedUser;
      acked.push(user);
      // The kill may come after the PATCH commits and before its answer: unacknowledged, it may be
      // stored or not, so either state is right until its answer arrives.
      const move = { status: 'inactive', age: user.age + 1, country: 'Brazil' };
      user.inFlight = move;
      const moved = await fetch(`${srv.url}/users/${user.id}`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify({ ...move, last_name: `Moved ${i % 4}` }),
      });
      if (moved.status !== 200) throw new Error(`unexpected ${moved.status}: ${await moved.text()}`);
      Object.assign(user, await moved.json());
      delete user.inFlight;
    } catch (err) {
      failures++;
      stops.push(whyStopped(err));
    }
  }
  return failures;
}

describe('crash safety (SIGKILL mid-stream)', () => {
  it('keeps every write acknowledged with 2xx, intact, after the process is killed and restarted', async () => {
    const first = await startServerProcess(env);
    const acked: Acked[] = [];
    const users: AckedUser[] = [];
    // The kill comes once 150 artists are acknowledged, while the writers are still writing; if the
    // writers stop before that (the server failed), the test says so instead of waiting for ever.
    const enough = deferred();
    const writers = [
      ...Array.from({ length: 8 }, (_, n) => writer(first, n, acked, () => acked.length >= 150 && enough.resolve())),
      ...Array.from({ length: 2 }, (_, n) => userWriter(first, n, users)),
    ];
    const stopped = Promise.all(writers).then((failures) => {
      throw new Error(
        `the writers stopped after ${acked.length} acknowledged artists (${failures.length} writers: ${stops.join('; ')}); server exit: ${first.child.exitCode ?? first.child.signalCode}; output: ${first.stdout().slice(-2000)}${first.stderr().slice(-2000)}`,
      );
    });
    await Promise.race([enough.promise, stopped]);
    stopped.catch(() => {}); // they stop after the kill too: that is the point
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const failures = await Promise.all(writers);
    // Every writer was cut off mid-stream by the kill, not stopped politely.
    expect(failures.every((f) => f === 1)).toBe(true);

    const second = await startServerProcess(env);
    let reader: SQLite.Database | undefined;
    const openReader = () => (reader ??= new SQLite(join(dir, 'catalogue.db'), { readonly: true }));
    try {
      const get = (path: string) => fetch(`${second.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      for (const { artist, album, song } of acked) {
        const res = await get(`/artists/${artist.id}`);
        expect(res.status, `artist ${artist.id}`).toBe(200);
        expect(await res.json()).toEqual({ name: artist.name, image: artist.image });
        if (album) {
          const albums = await get(`/artists/${artist.id}/albums`);
          expect(albums.status).toBe(200);
          expect(((await albums.json()) as { albums: unknown[] }).albums).toContainEqual(album);
        }
        if (album && song) {
          const res = await get(`/artists/${artist.id}/albums/${album.id}/songs/${song.id}`);
          expect(res.status, `song ${song.id}`).toBe(200);
          expect(await res.json()).toEqual(song);
        }
      }
      for (const user of users) {
        const res = await get(`/users/${user.id}`);
        expect(res.status, `user ${user.id}`).toBe(200);
        const stored = (await res.json()) as AckedUser;
        const acknowledged = { status: user.status, age: user.age, country: user.country };
        const state = { status: stored.status, age: stored.age, country: stored.country };
        if (user.inFlight) expect([acknowledged, user.inFlight], `user ${user.id}`).toContainEqual(state);
        else expect(state, `user ${user.id}`).toEqual(acknowledged);
      }
      // Totals come from the summary: after the crash they still count exactly the stored users.
      const stored = openReader().prepare('select count(*) from users').pluck().get() as number;
      const inactive = await get('/users?status=inactive&size=1');
      expect(inactive.headers.get('x-total-count')).toBe(String(openReader().prepare("select count(*) from users where status = 'inactive'").pluck().get()));
      expect((await get('/users?size=1')).headers.get('x-total-count')).toBe(String(stored));
      const crash = await get('/users?first_name_starts_with=cr&size=1');
      expect(crash.headers.get('x-total-count')).toBe(
        String(openReader().prepare("select count(*) from users where lower(first_name) like 'cr%'").pluck().get()),
      );
    } finally {
      reader?.close();
      second.child.kill('SIGTERM');
      await second.exited;
    }

    const db = new SQLite(join(dir, 'catalogue.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
      const stored = db.prepare('select count(*) from artists').pluck().get() as number;
      expect(stored).toBeGreaterThanOrEqual(acked.length);
      expect(stored).toBeLessThanOrEqual(acked.length + 8); // at most one unacknowledged write per writer
      const songs = db.prepare('select count(*) from songs').pluck().get() as number;
      const ackedSongs = acked.filter((a) => a.song).length;
      expect(songs).toBeGreaterThanOrEqual(ackedSongs);
      expect(songs).toBeLessThanOrEqual(ackedSongs + 8);
      // Every summary row equals counting the users themselves.
      const summary = db.prepare('select status, country_fold, country_key, age, n from users_counts where n <> 0 order by 1, 3, 4').all();
      const counted = db.prepare('select status, country_fold, country_key, age, count(*) as n from users group by 1, 2, 3, 4 order by 1, 3, 4').all();
      expect(summary).toEqual(counted);
      expect(counted.length).toBeGreaterThan(0);
      // So does every row of the name summary (migrations 20261124T0900, 20261126T0100).
      const names = db.prepare('select field, name, n from users_name_counts where n <> 0 order by 1, 2').all();
      const namesCounted = db
        .prepare(
          `select 'first_name' as field, first_name_key as name, count(*) as n from users group by 2
           union all select 'last_name', last_name_key, count(*) from users group by 2 order by 1, 2`,
        )
        .all();
      expect(names).toEqual(namesCounted);
      expect(namesCounted.length).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
