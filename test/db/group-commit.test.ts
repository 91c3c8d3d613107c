import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupCommit } from '../../src/db/group-commit.js';

// The group commit itself, on a bare SQLite handle (it exists only for SQLite; PostgreSQL commits
// each write on its own pooled connection). Through HTTP it is covered by the songs tests and the
// crash test, which kills the process mid-stream and finds every acknowledged song.

const dir = mkdtempSync(join(tmpdir(), 'mc-group-'));
let db: SQLite.Database;
let insert: SQLite.Statement;

beforeAll(() => {
  db = new SQLite(join(dir, 'g.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.exec('create table parents (id integer primary key); create table children (id integer primary key, parent_id integer not null references parents(id), name text not null)');
  db.exec('insert into parents (id) values (1)');
  insert = db.prepare('insert into children (parent_id, name) values (?, ?) returning id, name');
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const never = () => Promise.reject(new Error('not expected to run alone'));

describe('group commit', () => {
  it('commits concurrent writes together, and one failing write fails alone', async () => {
    const changesBefore = db.prepare('select total_changes()').pluck().get() as number;
    const results = await Promise.allSettled([
      groupCommit(db, insert, [1, 'a'], never),
      groupCommit(db, insert, [999, 'orphan'], never), // foreign key violation
      groupCommit(db, insert, [1, 'b'], never),
    ]);
    expect(results[0]).toMatchObject({ status: 'fulfilled', value: { name: 'a' } });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } });
    expect(results[2]).toMatchObject({ status: 'fulfilled', value: { name: 'b' } });
    expect(db.prepare('select name from children order by id').pluck().all()).toEqual(['a', 'b']);
    expect(db.inTransaction).toBe(false);
    expect((db.prepare('select total_changes()').pluck().get() as number) - changesBefore).toBe(2);
  });

  it('does not join a transaction that is open on the connection: the writes run on their own', async () => {
    db.exec('begin');
    db.exec("insert into children (parent_id, name) values (1, 'inside')");
    let ranAlone = 0;
    const pending = groupCommit(db, insert, [1, 'c'], async () => {
      ranAlone++;
      return [{ id: -1, name: 'alone' }];
    });
    await new Promise((r) => setImmediate(r));
    db.exec('rollback');
    expect(await pending).toEqual([{ id: -1, name: 'alone' }]);
    expect(ranAlone).toBe(1);
    expect(db.prepare("select count(*) from children where name in ('inside', 'c')").pluck().get()).toBe(0);
  });
});
