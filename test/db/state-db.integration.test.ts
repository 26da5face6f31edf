import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  commaJoined,
  forUpdate,
  indexedBy,
  isJson,
  jsonArrayElements,
  jsonField,
  jsonTextElements,
  likeIgnoringCase,
  rowsChanged,
  rowsOf,
  startsWith,
  tableFor,
  writeTogether,
  writeTogetherReturning,
} from '../../src/db/dialect.js';
import {
  ADVISORY_LOCK_NAMESPACE,
  MIGRATIONS_LOCK_KEY,
  openStateDatabase,
  StateDatabaseUnavailableError,
  StateWaitTimeoutError,
  type StateDatabase,
  type StateDb,
} from '../../src/db/state-db.js';
import { createAsyncWriteBatch } from '../../src/db/write-batch.js';
import { jobs as pgJobs } from '../../src/jobs/jobs.pg-table.js';
import { jobs as sqliteJobs, type NewJobRow } from '../../src/jobs/jobs.table.js';
import { dialects, postgresTestUrl, stateDatabaseFor } from '../support/dialects.js';
import { freeLoopbackPort } from '../support/net.js';
import { waitFor } from '../support/wait.js';

/**
 * src/db/ on both dialects (issue 34, step 1 of docs/design/cluster-state.md): one test body run on
 * SQLite `:memory:` and on a database of the run's PostgreSQL cluster, through test/support/dialects.ts.
 * The `jobs` table, which both dialects have, stands in for any feature's.
 */
const job = (id: string, fields: Partial<NewJobRow> = {}): NewJobRow => ({
  id,
  kind: 'audit',
  state: 'queued',
  createdAt: new Date(1_000),
  ...fields,
});

/** A promise the test settles, for a body that must stay open while the test looks around it. */
function held() {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

describe.each(dialects)('the state database on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'state-db');
  const jobs = tableFor(dialect, { sqlite: sqliteJobs, postgres: pgJobs });
  const ids = async (db?: StateDb) =>
    (await state().run((db) => db.select({ id: jobs.id }).from(jobs).orderBy(jobs.id), db)).map((row) => row.id);

  it('opens the dialect asked for', () => {
    expect(state().dialect).toBe(dialect);
    expect(state().sqlite === undefined).toBe(dialect === 'postgres');
  });

  it('writes together: every write or none, with no statement of the process between them on SQLite', async () => {
    await writeTogether(state(), (db) => [db.insert(jobs).values(job('a')), db.insert(jobs).values(job('b'))]);
    expect(await ids()).toEqual(['a', 'b']);
    // The second write breaks the primary key: the first is rolled back with it.
    await expect(
      writeTogether(state(), (db) => [
        db.update(jobs).set({ state: 'cancelled' }).where(eq(jobs.id, 'a')),
        db.insert(jobs).values(job('b')),
      ]),
    ).rejects.toThrow();
    const rows = await state().run((db) => db.select({ state: jobs.state }).from(jobs).where(eq(jobs.id, 'a')));
    expect(rows).toEqual([{ state: 'queued' }]);
    if (dialect === 'sqlite') {
      // A synchronous write queued as a microtask (a repository not yet on the state database) runs after the
      // writes committed, not between them: it is not rolled back with a failed set.
      const sqlite = state().sqlite!;
      const written = writeTogether(state(), (db) => {
        queueMicrotask(() =>
          sqlite.prepare("insert into jobs (id, kind, state, created_at) values ('m', 'audit', 'queued', 1)").run(),
        );
        return [db.insert(jobs).values(job('c')), db.insert(jobs).values(job('a'))];
      });
      await expect(written).rejects.toThrow();
      expect(await ids()).toEqual(['a', 'b', 'm']);
    }
  });

  it('writes together answering rows: what each write returned, in order, or nothing written when one fails', async () => {
    await state().run((db) => db.insert(jobs).values(job('b')));
    const claim = (db: StateDb, ...names: string[]) =>
      db
        .insert(jobs)
        .values(names.map((name) => job(name)))
        .onConflictDoNothing()
        .returning({ id: jobs.id });
    // Rows a write skipped (`b`, there already) are not answered; a write without rows answers none.
    expect(await writeTogetherReturning(state(), (db) => [claim(db, 'a', 'b'), claim(db, 'd', 'c')])).toEqual([
      { id: 'a' },
      { id: 'd' },
      { id: 'c' },
    ]);
    expect(await writeTogetherReturning(state(), (db) => [claim(db, 'a')])).toEqual([]);
    // The second write breaks a NOT NULL: the first is rolled back with it.
    await expect(
      writeTogetherReturning(state(), (db) => [
        claim(db, 'e'),
        db
          .insert(jobs)
          .values({ ...job('f'), kind: null as unknown as string })
          .returning({ id: jobs.id }),
      ]),
    ).rejects.toThrow();
    expect(await ids()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('commits a transaction’s writes together, and rolls every one back when its body throws', async () => {
    const answer = await state().transaction(async (tx) => {
      await tx.insert(jobs).values(job('a'));
      await tx.insert(jobs).values(job('b'));
      return 'done';
    });
    expect(answer).toBe('done');
    await expect(
      state().transaction(async (tx) => {
        await tx.insert(jobs).values(job('c'));
        await tx.update(jobs).set({ state: 'cancelled' }).where(eq(jobs.id, 'a'));
        throw new Error('the body fails');
      }),
    ).rejects.toThrow('the body fails');
    expect(await ids()).toEqual(['a', 'b']);
    const rows = await state().run((db) => db.select({ state: jobs.state }).from(jobs).where(eq(jobs.id, 'a')));
    expect(rows).toEqual([{ state: 'queued' }]);
  });

  it('never interleaves two overlapping transactions: the second rolls back only its own writes', async () => {
    const order: string[] = [];
    const firstHeld = held();
    const first = state().transaction(async (tx) => {
      order.push('first begins');
      await tx.insert(jobs).values(job('a'));
      await firstHeld.promise;
      await tx.insert(jobs).values(job('b'));
      order.push('first ends');
    });
    const second = state().transaction(async (tx) => {
      order.push('second begins');
      await tx.insert(jobs).values(job('c'));
      order.push('second ends');
      throw new Error('the second fails');
    });
    const secondFailure = second.catch((error: unknown) => error);
    // PostgreSQL: the first is held until the second has begun beside it (however long a connection takes under
    // load); SQLite: the second cannot begin meanwhile.
    if (dialect === 'postgres')
      await waitFor(
        () => order.includes('second begins'),
        10_000,
        () => 'the second transaction to begin beside the first',
      );
    else await sleep(50);
    firstHeld.release();
    await first;
    expect(await secondFailure).toEqual(new Error('the second fails'));
    expect(await ids()).toEqual(['a', 'b']);
    // SQLite's one connection takes one transaction at a time: the second began after the first ended.
    // PostgreSQL runs both at once, each on a connection of its own.
    if (dialect === 'sqlite') expect(order).toEqual(['first begins', 'first ends', 'second begins', 'second ends']);
    else expect(order.indexOf('second begins')).toBeLessThan(order.indexOf('first ends'));
  });

  it('keeps a statement made outside an open transaction out of it: it neither sees nor shares its fate', async () => {
    const bodyHeld = held();
    const open = state().transaction(async (tx) => {
      await tx.insert(jobs).values(job('inside'));
      await bodyHeld.promise;
      throw new Error('rolled back');
    });
    await sleep(20);
    let read = false;
    const reading = state()
      .run((db) => db.select({ id: jobs.id }).from(jobs))
      .finally(() => (read = true));
    const writing = state().run((db) => db.insert(jobs).values(job('outside')));
    await sleep(50);
    // On SQLite the statements wait for the transaction (on its connection they would be part of it).
    if (dialect === 'sqlite') expect(read).toBe(false);
    bodyHeld.release();
    await expect(open).rejects.toThrow('rolled back');
    expect((await reading).map((row) => row.id)).not.toContain('inside');
    await writing;
    expect(await ids()).toEqual(['outside']);
  });

  it('runs a statement given the body’s `tx` inside the transaction', async () => {
    await expect(
      state().transaction(async (tx) => {
        await tx.insert(jobs).values(job('inside'));
        expect(await ids(tx)).toEqual(['inside']);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await ids()).toEqual([]);
  });

  it('runs a transaction nested in a body as a savepoint: one that throws undoes only its own writes', async () => {
    await state().transaction(async (tx) => {
      await tx.insert(jobs).values(job('outer'));
      await expect(
        tx.transaction(async (inner) => {
          await inner.insert(jobs).values(job('inner'));
          await inner.transaction(async (innermost) => void (await innermost.insert(jobs).values(job('innermost'))));
          throw new Error('the inner work fails');
        }),
      ).rejects.toThrow('the inner work fails');
      await tx.transaction(async (inner) => void (await inner.insert(jobs).values(job('kept'))));
      await tx.insert(jobs).values(job('after'));
    });
    expect(await ids()).toEqual(['after', 'kept', 'outer']);
  });

  it('counts the rows a write changed', async () => {
    await state().run((db) => db.insert(jobs).values([job('a'), job('b'), job('c', { state: 'running' })]));
    const queued = eq(jobs.state, 'queued');
    expect(rowsChanged(await state().run((db) => db.update(jobs).set({ state: 'cancelled' }).where(queued)))).toBe(2);
    expect(rowsChanged(await state().run((db) => db.update(jobs).set({ state: 'cancelled' }).where(queued)))).toBe(0);
    expect(rowsChanged(await state().run((db) => db.delete(jobs).where(eq(jobs.state, 'cancelled'))))).toBe(2);
    expect(
      rowsChanged(
        await state().transaction((tx) =>
          tx
            .insert(jobs)
            .values([job('d'), job('e')])
            .then((r) => r),
        ),
      ),
    ).toBe(2);
  });

  it('reads through the index SQLite is told to use, and PostgreSQL chooses', async () => {
    await state().run((db) =>
      db.insert(jobs).values([job('a', { siteId: 's1' }), job('b', { siteId: 's2' }), job('c', { siteId: 's1' })]),
    );
    const rows = await state().run((db) =>
      rowsOf<{ id: string }>(
        state(),
        db,
        sql`select j.id from jobs j ${indexedBy(dialect, 'jobs_site_idx')} where j.site_id = ${'s1'} order by j.id`,
      ),
    );
    expect(rows).toEqual([{ id: 'a' }, { id: 'c' }]);
    if (dialect === 'sqlite') {
      const plan = await state().run((db) =>
        rowsOf<{ detail: string }>(
          state(),
          db,
          sql`explain query plan select j.id from jobs j ${indexedBy(dialect, 'jobs_created_idx')} where j.site_id = ${'s1'}`,
        ),
      );
      expect(plan.map((row) => row.detail).join()).toContain('jobs_created_idx');
    }
  });

  it('looks inside JSON, matches ignoring case, reads raw rows and locks a row read to decide a write', async () => {
    const params = { sites: [{ siteId: 's2' }, { siteId: 's1' }], ids: ['j1', 'j3'] };
    await state().run((db) =>
      db
        .insert(jobs)
        .values([
          job('j1', { kind: 'Fleet-Action', params: JSON.stringify(params) }),
          job('j2', { kind: 'backup' }),
          job('j3', { kind: 'audit' }),
        ]),
    );
    const sites = await state().run((db) =>
      rowsOf<{ site: string }>(
        state(),
        db,
        sql`select ${jsonField(dialect, sql`e.value`, 'siteId')} as site
            from jobs j, ${jsonArrayElements(dialect, sql`j.params`, 'sites')} e
            where j.id = 'j1' and ${isJson(dialect, sql`j.params`)} order by 1`,
      ),
    );
    expect(sites).toEqual([{ site: 's1' }, { site: 's2' }]);

    const listed = await state().run((db) =>
      db
        .select({ id: jobs.id })
        .from(jobs)
        .where(
          sql`${jobs.id} in (select value from ${jsonTextElements(dialect, sql`${JSON.stringify(['j1', 'j3'])}`)})`,
        )
        .orderBy(jobs.id),
    );
    expect(listed).toEqual([{ id: 'j1' }, { id: 'j3' }]);
    const fromParams = await state().run((db) =>
      rowsOf<{ id: string }>(
        state(),
        db,
        sql`select value as id from jobs j, ${jsonTextElements(dialect, sql`j.params`, 'ids')} e where j.id = 'j1' order by 1`,
      ),
    );
    expect(fromParams).toEqual([{ id: 'j1' }, { id: 'j3' }]);

    const matching = await state().run((db) =>
      db
        .select({ id: jobs.id })
        .from(jobs)
        .where(likeIgnoringCase(dialect, jobs.kind, 'fleet%'))
        .orderBy(jobs.id),
    );
    expect(matching).toEqual([{ id: 'j1' }]);

    const decided = await state().transaction(async (tx) => {
      const [row] = await forUpdate(dialect, tx.select().from(jobs).where(eq(jobs.id, 'j2')));
      if (row?.state !== 'queued') return 0;
      return rowsChanged(await tx.update(jobs).set({ state: 'running' }).where(eq(jobs.id, 'j2')));
    });
    expect(decided).toBe(1);
  });

  it('reads the keys that start with a prefix, character by character, as a range of the key’s index', async () => {
    await state().run((db) =>
      db
        .insert(jobs)
        .values(
          ['b_1', 'b_1-00000', 'b_1-00001', 'b_10-00000', 'bx1-00000', 'b_1%-0', 'B_1-00002'].map((id) => job(id)),
        ),
    );
    const prefixed = (prefix: string) =>
      state().run((db) =>
        db
          .select({ id: jobs.id })
          .from(jobs)
          .where(startsWith(dialect, jobs.id, prefix))
          .orderBy(jobs.id)
          .then((rows) => rows.map((row) => row.id)),
      );
    // `_` and `%` are no wildcards, and case counts.
    expect(await prefixed('b_1-')).toEqual(['b_1-00000', 'b_1-00001']);
    expect(await prefixed('b_1%')).toEqual(['b_1%-0']);
    expect(await prefixed('b_10-')).toEqual(['b_10-00000']);
    expect(await prefixed('c')).toEqual([]);
    const plan = await state().transaction(async (tx) => {
      // (a table of seven rows is read whole by choice: told not to, the planner shows whether the index can serve)
      if (dialect === 'postgres') await tx.execute(sql`set local enable_seqscan = off`);
      const explain = dialect === 'postgres' ? sql`explain` : sql`explain query plan`;
      const rows = await rowsOf<Record<string, string>>(
        state(),
        tx,
        sql`${explain} select id from jobs where ${startsWith(dialect, sql`id`, 'b_1-')}`,
      );
      return rows.map((row) => Object.values(row).join(' ')).join('\n');
    });
    expect(plan).toMatch(
      dialect === 'postgres'
        ? /Index Only Scan using jobs_pkey[\s\S]*Index Cond: \(\(id >= 'b_1-'::text\) AND \(id < 'b_1\.'::text\)\)/
        : /SEARCH jobs USING COVERING INDEX sqlite_autoindex_jobs_1 \(id>\? AND id<\?\)/,
    );
  });

  it('joins an aggregate’s text values by commas, each once with `distinct`, and answers null over no rows', async () => {
    await state().run((db) =>
      db.insert(jobs).values([job('a', { kind: 'backup' }), job('b', { kind: 'audit' }), job('c', { kind: 'backup' })]),
    );
    const joined = (distinct: boolean, kind?: string) =>
      state().run((db) =>
        db
          .select({ kinds: commaJoined(dialect, jobs.kind, { distinct }) })
          .from(jobs)
          .where(kind ? eq(jobs.kind, kind) : undefined)
          .then((rows) => rows[0]!.kinds),
      );
    const sorted = (list: string | null) => list?.split(',').sort();
    expect(sorted(await joined(false))).toEqual(['audit', 'backup', 'backup']);
    expect(sorted(await joined(true))).toEqual(['audit', 'backup']);
    expect(await joined(true, 'prune')).toBeNull();
  });

  describe('the async write batch', () => {
    it('holds writes until the next commit, then writes them and the commit’s own in one transaction', async () => {
      let transactions = 0;
      const batch = createAsyncWriteBatch((body) => {
        transactions++;
        return state().transaction(body);
      });
      const seen = new Set<StateDb>();
      batch.later(async (tx) => {
        seen.add(tx);
        await tx.insert(jobs).values(job('ended'));
      });
      batch.later(async (tx) => {
        seen.add(tx);
        await tx.insert(jobs).values(job('patched'));
      });
      expect(await ids()).toEqual([]);
      const answer = await batch.commit(async (tx) => {
        seen.add(tx);
        await tx.insert(jobs).values(job('started'));
        return 42;
      });
      expect(answer).toBe(42);
      expect(transactions).toBe(1);
      expect(seen.size).toBe(1);
      expect(await ids()).toEqual(['ended', 'patched', 'started']);
      // Nothing held and no work: no transaction at all.
      expect(await batch.commit()).toBeUndefined();
      expect(transactions).toBe(1);
    });

    it('rolls every write back when one throws, and keeps the held ones for the next commit', async () => {
      await state().run((db) => db.insert(jobs).values(job('taken')));
      const batch = createAsyncWriteBatch((body) => state().transaction(body));
      batch.later(async (tx) => void (await tx.insert(jobs).values(job('ended'))));
      await expect(batch.commit(async (tx) => void (await tx.insert(jobs).values(job('taken'))))).rejects.toThrow();
      expect(await ids()).toEqual(['taken']);
      await batch.commit();
      expect(await ids()).toEqual(['ended', 'taken']);
    });

    it('runs a transaction made inside a commit as a savepoint of it', async () => {
      const batch = createAsyncWriteBatch((body) => state().transaction(body));
      batch.later(async (tx) => void (await tx.insert(jobs).values(job('held'))));
      await batch.commit(async (tx) => {
        await expect(
          tx.transaction(async (inner) => {
            await inner.insert(jobs).values(job('inner'));
            throw new Error('the inner work fails');
          }),
        ).rejects.toThrow('the inner work fails');
        await tx.insert(jobs).values(job('after'));
      });
      expect(await ids()).toEqual(['after', 'held']);
    });

    it('commits each held write once, in order, when commits overlap', async () => {
      const order: string[] = [];
      const batch = createAsyncWriteBatch((body) => state().transaction(body));
      const write = (id: string) => async (tx: StateDb) => {
        order.push(id);
        await tx.insert(jobs).values(job(id));
      };
      batch.later(write('one'));
      const first = batch.commit(write('first-work'));
      batch.later(write('two'));
      const second = batch.commit(write('second-work'));
      const third = batch.commit();
      await Promise.all([first, second, third]);
      expect(order).toEqual(['one', 'first-work', 'two', 'second-work']);
      expect(await ids()).toEqual(['first-work', 'one', 'second-work', 'two']);
    });

    it('keeps a failed commit’s writes ahead of those held since', async () => {
      await state().run((db) => db.insert(jobs).values(job('taken')));
      const batch = createAsyncWriteBatch((body) => state().transaction(body));
      const order: string[] = [];
      batch.later(async (tx) => {
        order.push('first');
        await tx.insert(jobs).values(job('first'));
      });
      const failing = batch.commit(async (tx) => void (await tx.insert(jobs).values(job('taken'))));
      batch.later(async (tx) => {
        order.push('second');
        await tx.insert(jobs).values(job('second'));
      });
      await expect(failing).rejects.toThrow();
      await batch.commit();
      expect(order).toEqual(['first', 'first', 'second']);
      expect(await ids()).toEqual(['first', 'second', 'taken']);
    });
  });
});

describe.runIf(dialects.includes('sqlite'))('the SQLite serialiser', () => {
  const jobs = sqliteJobs as unknown as typeof pgJobs;
  const open = (waitLimitMs = 200) => openStateDatabase({ sqlitePath: ':memory:', waitLimitMs });

  it('fails a statement a body makes outside its `tx` after the wait limit, rolling the transaction back', async () => {
    const state = await open();
    try {
      await expect(
        state.transaction(async (tx) => {
          await tx.insert(jobs).values(job('inside'));
          await state.run((db) => db.select().from(jobs));
        }),
      ).rejects.toThrow(StateWaitTimeoutError);
      await expect(
        state.transaction(async (tx) => {
          await tx.insert(jobs).values(job('inside'));
          await state.transaction(async (other) => void (await other.insert(jobs).values(job('other'))));
        }),
      ).rejects.toThrow(/must await only statements of its `tx`/);
      // Nothing kept, and the connection serves the next statement at once.
      expect(state.sqlite!.inTransaction).toBe(false);
      expect(await state.run((db) => db.select({ id: jobs.id }).from(jobs))).toEqual([]);
    } finally {
      await state.close();
    }
  });

  it('admits waiters in order: statements made before a transaction run before it, those after it wait', async () => {
    const state = await open(5_000);
    try {
      const order: string[] = [];
      const bodyHeld = held();
      const first = state.transaction(async (tx) => {
        await tx.insert(jobs).values(job('first'));
        await bodyHeld.promise;
      });
      const sees = async (db: StateDb) => {
        const rows = await db.select({ id: jobs.id }).from(jobs);
        order.push(`statement sees ${rows.map((row) => row.id).join(',')}`);
      };
      const before = state.run(sees);
      const second = state.transaction(async (tx) => {
        order.push('second transaction');
        await tx.insert(jobs).values(job('second'));
      });
      const after = state.run(sees);
      bodyHeld.release();
      await Promise.all([first, before, second, after]);
      expect(order).toEqual(['statement sees first', 'second transaction', 'statement sees first,second']);
    } finally {
      await state.close();
    }
  });
});

describe.runIf(dialects.includes('postgres'))('opening PostgreSQL', () => {
  const migrations = (
    JSON.parse(readFileSync(resolve(import.meta.dirname, '../../drizzle-pg/meta/_journal.json'), 'utf8')) as {
      entries: unknown[];
    }
  ).entries.length;

  it('migrates once when two processes open one database at once: each waits on the advisory lock', async () => {
    const url = await postgresTestUrl('state-db-open');
    // Another process holding the lock, as one migrating would.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    const opened: StateDatabase[] = [];
    try {
      await holder.query('select pg_advisory_lock($1, $2)', [ADVISORY_LOCK_NAMESPACE, MIGRATIONS_LOCK_KEY]);
      const opening = [1, 2].map(() =>
        openStateDatabase({ url, sqlitePath: ':memory:', poolSize: 2 }).then((state) => {
          opened.push(state);
          return state;
        }),
      );
      await sleep(300);
      expect(opened).toHaveLength(0);
      const before = await holder.query<{ table: string | null }>(
        `select to_regclass('drizzle.__drizzle_migrations')::text as table`,
      );
      expect(before.rows).toEqual([{ table: null }]);

      await holder.query('select pg_advisory_unlock($1, $2)', [ADVISORY_LOCK_NAMESPACE, MIGRATIONS_LOCK_KEY]);
      const [one, two] = await Promise.all(opening);
      const applied = await holder.query<{ n: number }>(`select count(*)::int as n from drizzle.__drizzle_migrations`);
      expect(applied.rows).toEqual([{ n: migrations }]);
      await one!.run((db) => db.insert(pgJobs).values(job('shared')));
      expect(await two!.run((db) => db.select({ id: pgJobs.id }).from(pgJobs))).toEqual([{ id: 'shared' }]);
    } finally {
      await Promise.all(opened.map((state) => state.close()));
      await holder.end();
    }
  });

  it('fails a transaction whose session the server ended between two statements, and carries on', async () => {
    const url = await postgresTestUrl('state-db-ended');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const errors: Error[] = [];
    const state = await openStateDatabase({
      url,
      sqlitePath: ':memory:',
      poolSize: 2,
      onConnectionError: (error) => errors.push(error),
    });
    try {
      const ending = state.transaction(async (tx) => {
        await tx.insert(pgJobs).values(job('lost'));
        const [row] = await rowsOf<{ pid: number }>(state, tx, sql`select pg_backend_pid() as pid`);
        // As a server restart or idle_in_transaction_session_timeout would, while the body is between statements:
        // before, the connection's error event had no listener and ended the process.
        await admin.query('select pg_terminate_backend($1)', [row!.pid]);
        await sleep(200);
        await tx.insert(pgJobs).values(job('after'));
      });
      await expect(ending).rejects.toThrow();
      expect(errors.map((error) => error.message).join()).toMatch(/terminat/);
      // Nothing of it was kept, and the pool serves the next statement on a new connection.
      expect(await state.run((db) => db.select({ id: pgJobs.id }).from(pgJobs))).toEqual([]);
    } finally {
      await state.close();
      await admin.end();
    }
  });

  it('says which server it cannot reach, never the password', async () => {
    const port = await freeLoopbackPort();
    const error = (await openStateDatabase({
      url: `postgres://sitewarden:s3cret-words@127.0.0.1:${port}/state`,
      sqlitePath: ':memory:',
    }).catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(StateDatabaseUnavailableError);
    expect(error.message).toContain(`127.0.0.1:${port}/state`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain('s3cret');
  });

  it('says which server refused the connection, and why', async () => {
    const cluster = new URL(await postgresTestUrl('state-db-refused'));
    cluster.username = 'nobody';
    cluster.password = 'not-shown';
    const error = (await openStateDatabase({ url: cluster.toString(), sqlitePath: ':memory:' }).catch(
      (caught: unknown) => caught,
    )) as Error;
    expect(error).toBeInstanceOf(StateDatabaseUnavailableError);
    expect(error.message).toContain(`${cluster.hostname}:${cluster.port}${cluster.pathname}`);
    expect(error.message).toMatch(/role "nobody" does not exist/);
    expect(error.message).not.toContain('not-shown');
  });
});
