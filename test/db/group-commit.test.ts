import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupCommit, MAX_ROWS, type ManyRows } from '../../src/db/group-commit.js';

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
  db.exec(
    'create table parents (id integer primary key); create table children (id integer primary key, parent_id integer not null references parents(id), name text not null)',
  );
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

  describe('writes that can share one multi-row statement', () => {
    /** The multi-row form of `insert`, counting the statements it makes by size. */
    function multiRow() {
      const sizes: number[] = [];
      const many: ManyRows = (n) => {
        sizes.push(n);
        const stmt = db.prepare(`insert into children (parent_id, name) values ${Array(n).fill('(?, ?)').join(', ')} returning id, name`);
        return { stmt, order: (rows) => (rows as { id: number }[]).sort((a, b) => a.id - b.id) };
      };
      return { many, sizes };
    }

    it('run as one statement per batch, each caller answered with its own row', async () => {
      const { many, sizes } = multiRow();
      const names = Array.from({ length: 5 }, (_, i) => `m${i}`);
      const rows = await Promise.all(names.map((name) => groupCommit(db, insert, [1, name], never, many)));
      expect(sizes).toEqual([5]);
      expect(rows.map((r) => (r as { name: string }).name)).toEqual(names);
      const stored = db.prepare(`select id, name from children where name like 'm%' order by id`).all();
      expect(rows).toEqual(stored);
    });

    it(`take at most ${MAX_ROWS} rows a statement, and a write without the multi-row form runs on its own between them`, async () => {
      const { many, sizes } = multiRow();
      const first = Array.from({ length: MAX_ROWS + 2 }, (_, i) => groupCommit(db, insert, [1, `n${i}`], never, many));
      const single = groupCommit(db, insert, [1, 'single'], never);
      const last = Array.from({ length: 3 }, (_, i) => groupCommit(db, insert, [1, `o${i}`], never, many));
      const rows = (await Promise.all([...first, single, ...last])) as { name: string }[];
      expect(sizes).toEqual([MAX_ROWS, 2, 3]);
      expect(rows.map((r) => r.name)).toEqual([...Array.from({ length: MAX_ROWS + 2 }, (_, i) => `n${i}`), 'single', 'o0', 'o1', 'o2']);
    });

    it('a failing write fails alone: the statement is rolled back and its writes run one by one', async () => {
      const { many } = multiRow();
      const changesBefore = db.prepare('select total_changes()').pluck().get() as number;
      const results = await Promise.allSettled([
        groupCommit(db, insert, [1, 'p0'], never, many),
        groupCommit(db, insert, [999, 'orphan'], never, many), // foreign key violation
        groupCommit(db, insert, [1, 'p2'], never, many),
      ]);
      expect(results[0]).toMatchObject({ status: 'fulfilled', value: { name: 'p0' } });
      expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' } });
      expect(results[2]).toMatchObject({ status: 'fulfilled', value: { name: 'p2' } });
      expect(db.prepare(`select name from children where name like 'p%' or name = 'orphan' order by id`).pluck().all()).toEqual(['p0', 'p2']);
      // Two rows, not three plus a rollback: the multi-row attempt left nothing behind.
      expect((db.prepare('select total_changes()').pluck().get() as number) - changesBefore).toBe(2);
      expect(db.inTransaction).toBe(false);
    });

    it('an error that ends the transaction fails every write of the batch, and none is stored', async () => {
      // RAISE(ROLLBACK) ends the transaction, as a full disk or an I/O error would.
      db.exec("create table doomed (x); create trigger doomed_insert before insert on doomed begin select raise(rollback, 'gone'); end");
      const raise = db.prepare('insert into doomed (x) values (1)');
      const { many } = multiRow();
      const results = await Promise.allSettled([
        groupCommit(db, insert, [1, 'q0'], never, many),
        groupCommit(db, raise, [], never),
        groupCommit(db, insert, [1, 'q2'], never, many),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(db.prepare(`select count(*) from children where name like 'q%'`).pluck().get()).toBe(0);
      expect(db.inTransaction).toBe(false);
    });
  });
});
