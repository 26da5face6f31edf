import type Database from 'better-sqlite3';
import type { Db } from './database.js';

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
