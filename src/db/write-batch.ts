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
 * A write held in a write batch (or a kind's own row written with its job, `OwnRow`). In a batch over the daemon's
 * SQLite statements it is called without a transaction, inside the one better-sqlite3 transaction of the commit, and
 * writes at once, synchronously: no await may fall inside that transaction. In a batch over a state database's
 * transaction (`createAsyncWriteBatch`: PostgreSQL) it is given that transaction's `tx`, and may be async.
 */
export type HeldWrite<T = unknown> = (tx?: StateDb) => T | Promise<T>;

/** A held write made inside a synchronous SQLite transaction: a promise there would be written after it ended. */
export function writtenAtOnce<T>(written: T | Promise<T>): T {
  if (written instanceof Promise)
    throw new Error('a write inside a synchronous SQLite transaction must be made at once, not awaited');
  return written;
}

/**
 * The writes of one piece of work that talks to a site, committed together: each commit costs a
 * write to the database's log, several per site update when each write commits on its own
 * (bench/bulk-machinery.ts). A write held with `later` waits for the next `commit`, which the
 * work makes (and awaits) before each request to the site (what it records as started is stored
 * before the site hears of it) and at its end; between the two only steps without I/O run, so a
 * crash loses no write a request had followed.
 *
 * Two kinds, one contract: `createWriteBatch` over the daemon's SQLite statements (each commit one
 * better-sqlite3 transaction, written before `commit` returns; its held writes called without a
 * transaction), and `createAsyncWriteBatch` over a state database's transactions (held writes given
 * the `tx`; PostgreSQL in a cluster). A held write serves both when it writes on `tx` if given and
 * through a synchronous SQLite statement if not.
 */
export interface WriteBatch {
  /** Held until the next commit. */
  later(write: HeldWrite): void;
  /**
   * The writes held, then `work`'s, in one transaction; `work`'s result. One that throws rolls back
   * every one and rejects; the held writes stay held for the next commit (`work` is the caller's to redo).
   */
  commit<T>(work?: HeldWrite<T>): Promise<T | undefined>;
}

/** The batch over SQLite's synchronous transactions: a commit is written before it returns (its promise only reports it). */
export function createWriteBatch(transaction: Transaction): WriteBatch {
  const held: HeldWrite[] = [];
  return {
    later: (write) => void held.push(write),
    commit<T>(work?: HeldWrite<T>): Promise<T | undefined> {
      if (held.length === 0 && !work) return Promise.resolve(undefined);
      const writes = [...held];
      try {
        const result = transaction(() => {
          for (const write of writes) writtenAtOnce(write());
          return work && writtenAtOnce(work());
        });
        held.splice(0, writes.length);
        return Promise.resolve(result);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
  };
}

/** A transaction of either dialect: `StateDatabase.transaction` (state-db.ts). */
export type AsyncTransaction = <T>(body: (tx: StateDb) => Promise<T>) => Promise<T>;

/**
 * `WriteBatch` over a `StateDatabase`'s transactions (issue 34): its held writes given the transaction's `tx`
 * (each awaited in turn). A commit takes the writes held when it is made, as the synchronous batch does; one that
 * throws puts them back in front of any held since, for the next commit made. Commits of one batch run one after
 * another in the order made (on PostgreSQL two would otherwise run at once on two connections): a write is never
 * committed twice, and writes commit in the order held but across a failed commit (its writes wait for the next
 * commit made after the failure, and a commit made before that runs first).
 */
export interface AsyncWriteBatch extends WriteBatch {
  later(write: (tx: StateDb) => unknown): void;
  commit<T>(work?: (tx: StateDb) => T | Promise<T>): Promise<T | undefined>;
}

export function createAsyncWriteBatch(transaction: AsyncTransaction): AsyncWriteBatch {
  const held: ((tx: StateDb) => unknown)[] = [];
  /** The last commit made, settled or not: the next one starts after it. */
  let previous: Promise<unknown> = Promise.resolve();
  return {
    later: (write) => void held.push(write),
    commit<T>(work?: (tx: StateDb) => T | Promise<T>): Promise<T | undefined> {
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
