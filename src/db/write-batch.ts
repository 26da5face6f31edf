import type Database from 'better-sqlite3';
import type { Db } from './database.js';
import type { StateDb } from './state-db.js';

/** Runs `work` (synchronous writes through any repository on the database) in one SQLite transaction. */
export type Transaction = <T>(work: () => T) => T;

/**
 * better-sqlite3's own transaction, made once (drizzle's `db.transaction` builds one per call).
 * Called inside another transaction it runs as a savepoint of it.
 */
export function transactionOf(db: Db): Transaction {
  const run = (db as Db & { $client: Database.Database }).$client.transaction((work: () => unknown) => work());
  return <T>(work: () => T): T => run(work) as T;
}

/**
 * The writes of one piece of work that talks to a site, committed together: each commit costs a
 * write to the database's log, several per site update when each write commits on its own
 * (bench/bulk-machinery.ts). A write held with `later` waits for the next `commit`, which the
 * work makes before each request to the site (what it records as started is stored before the
 * site hears of it) and at its end; between the two only synchronous steps run (no I/O), so a
 * crash loses no write a request had followed.
 */
export interface WriteBatch {
  /** Held until the next commit. */
  later(write: () => void): void;
  /**
   * The writes held, then `work`'s, in one transaction; `work`'s result. One that throws rolls back
   * every one and throws; the held writes stay held for the next commit (`work` is the caller's to redo).
   */
  commit<T>(work?: () => T): T | undefined;
}

export function createWriteBatch(transaction: Transaction): WriteBatch {
  const held: (() => void)[] = [];
  return {
    later: (write) => void held.push(write),
    commit<T>(work?: () => T): T | undefined {
      if (held.length === 0 && !work) return undefined;
      const writes = [...held];
      const result = transaction(() => {
        for (const write of writes) write();
        return work?.();
      });
      held.splice(0, writes.length);
      return result;
    },
  };
}

/** No batch: every write commits as it is made (callers outside a batched piece of work). */
export const unbatched: WriteBatch = { later: (write) => write(), commit: (work) => work?.() };

/** A transaction of either dialect: `StateDatabase.transaction` (state-db.ts). */
export type AsyncTransaction = <T>(body: (tx: StateDb) => Promise<T>) => Promise<T>;

/**
 * `WriteBatch` for repositories on a `StateDatabase` (issue 34): the same contract, its held writes
 * functions of the transaction's `tx` (each awaited in turn), its `commit` async. A commit takes the
 * writes held when it is made, as the synchronous batch does; one that throws puts them back in front
 * of any held since, for the next commit made. Commits of one batch run one after another in the order
 * made (on PostgreSQL two would otherwise run at once on two connections): a write is never committed
 * twice, and writes commit in the order held but across a failed commit (its writes wait for the next
 * commit made after the failure, and a commit made before that runs first).
 */
export interface AsyncWriteBatch {
  /** Held until the next commit. */
  later(write: (tx: StateDb) => Promise<unknown>): void;
  /**
   * The writes held, then `work`'s, in one transaction; `work`'s result. One that throws rolls back
   * every one and rejects; the held writes stay held for the next commit (`work` is the caller's to redo).
   */
  commit<T>(work?: (tx: StateDb) => Promise<T>): Promise<T | undefined>;
}

export function createAsyncWriteBatch(transaction: AsyncTransaction): AsyncWriteBatch {
  const held: ((tx: StateDb) => Promise<unknown>)[] = [];
  /** The last commit made, settled or not: the next one starts after it. */
  let previous: Promise<unknown> = Promise.resolve();
  return {
    later: (write) => void held.push(write),
    commit<T>(work?: (tx: StateDb) => Promise<T>): Promise<T | undefined> {
      if (held.length === 0 && !work) return Promise.resolve(undefined);
      const writes = held.splice(0, held.length);
      const result = previous.then(() =>
        transaction(async (tx) => {
          for (const write of writes) await write(tx);
          return work?.(tx);
        }).catch((error: unknown) => {
          held.unshift(...writes);
          throw error;
        }),
      );
      previous = result.catch(() => undefined);
      return result;
    },
  };
}
