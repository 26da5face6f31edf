import type Database from 'better-sqlite3';
import { drizzle as drizzlePg, type NodePgQueryResultHKT } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { findMigrationsFolder, openDatabase, type DatabaseHandle, type Db } from './database.js';

/**
 * The daemon's state in either dialect (issue 34, docs/design/cluster-state.md): PostgreSQL when a
 * database URL is given (cluster mode), SQLite in the data directory otherwise (`openDatabase`, its
 * behaviour unchanged). Repositories get a `StateDatabase` and write one body for both.
 *
 * The contract a repository follows:
 *
 * `StateDb` is drizzle's node-postgres database type (`NodePgDatabase` without its `$client`, so that a
 * transaction's `tx` is one too).
 *
 * - **Every statement goes through `run` or a transaction's `tx`**: `state.run((db) => db.select()…)`, or
 *   `state.run(…, tx)` in a method that may be called inside a transaction (it then runs on `tx` at once).
 *   Never `state.db.…` directly: on SQLite one connection serves the process, and a statement made
 *   on it while a transaction is open would become part of that transaction (and be rolled back with
 *   it). `run` lets such a statement wait for the transaction; when none is open or waiting (nearly
 *   always: a transaction of statements lasts microseconds) it runs at once after one boolean check.
 *   On PostgreSQL `run` is `work(db)` on the pool.
 * - **A transaction's body awaits only statements of its `tx`** (no site request, no file I/O, no
 *   `state.run` without `tx`, no `state.transaction`): on SQLite it holds the process's only
 *   connection, so anything else it awaited would wait for it in turn. Such a wait is not a hang:
 *   it fails with `StateWaitTimeoutError` after `waitLimitMs` (SQLite's own busy timeout, 5 s),
 *   which rolls the transaction back.
 * - **A nested transaction is a savepoint**: `tx.transaction(async (inner) => …)` inside a body (one at
 *   a time, awaited) runs as a savepoint on both dialects; one that throws rolls back only its own
 *   writes, and the outer body goes on.
 * - A read that decides a write becomes one conditional statement where it can (`update … where
 *   state in (…) returning *`); otherwise it is a transaction, with `forUpdate` (dialect.ts) on the read.
 * - What the dialects spell differently goes through dialect.ts; a SQLite fast path (a prepared
 *   statement on `sqlite`) still runs inside `run`.
 */
export type StateDb = PgDatabase<NodePgQueryResultHKT>;

export type Dialect = 'sqlite' | 'postgres';

export interface StateDatabase {
  readonly dialect: Dialect;
  /** The drizzle database, typed as PostgreSQL's in both modes: use it only through `run` and `transaction`. */
  readonly db: StateDb;
  /** SQLite mode: the connection, for fast paths (prepared statements, run inside `run`); undefined on PostgreSQL. */
  readonly sqlite: Database.Database | undefined;
  /**
   * SQLite mode: the connection's drizzle database for the repositories not yet on the common surface
   * (issue 34: they convert module by module, docs/design/cluster-state.md); undefined on PostgreSQL.
   */
  readonly sqliteDb: Db | undefined;
  /** `work`'s statements on the database, after the open transaction if there is one (on `tx` at once when given). */
  run<T>(work: (db: StateDb) => T | PromiseLike<T>, tx?: StateDb): Promise<T>;
  /**
   * `body`'s statements in one transaction, committed when it resolves and rolled back when it throws
   * (the error is rethrown). On SQLite one transaction is open at a time; others wait their turn.
   */
  transaction<T>(body: (tx: StateDb) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface StateDatabaseOptions {
  /** `SITEWARDEN_DATABASE_URL`: PostgreSQL when given (non-empty), SQLite at `sqlitePath` otherwise. */
  url?: string | undefined;
  /** The SQLite file (`:memory:` in tests); unused on PostgreSQL. */
  sqlitePath: string;
  /** Apply the dialect's pending migrations (the default); false only checks, as `openDatabase` does on SQLite. */
  migrate?: boolean;
  /** SQLite: how long a statement or transaction waits for the open transaction before failing. */
  waitLimitMs?: number;
  /** PostgreSQL: the pool's size. */
  poolSize?: number;
  /** PostgreSQL: how long a new connection may take. */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: a pooled connection's error outside a statement (the server restarted, or ended a session
   * left idle inside a transaction); the pool drops that connection, and a transaction on it fails.
   */
  onConnectionError?: (error: Error) => void;
}

export async function openStateDatabase(options: StateDatabaseOptions): Promise<StateDatabase> {
  return options.url ? openPostgres(options.url, options) : openSqlite(options);
}

/**
 * A statement or transaction waited longer than the wait limit for the SQLite transaction open before
 * it: almost always a transaction's body awaiting something other than its `tx`.
 */
export class StateWaitTimeoutError extends Error {
  override name = 'StateWaitTimeoutError';
  constructor(waitedMs: number) {
    super(
      `waited ${waitedMs} ms for the open SQLite transaction: a transaction's body must await only statements of its ` +
        '`tx` (a `state.run` without `tx` or a `state.transaction` inside it waits for the body itself)',
    );
  }
}

/** PostgreSQL could not be reached, or refused the connection. Names the server and database, never the password. */
export class StateDatabaseUnavailableError extends Error {
  override name = 'StateDatabaseUnavailableError';
  constructor(
    readonly where: string,
    cause: unknown,
  ) {
    super(`cannot use PostgreSQL at ${where}: ${reasonOf(cause)}`, { cause });
  }
}

/** A connection error's words: node's AggregateError (every address of a host refused) has no message of its own. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message) return error.message;
  const inner = error instanceof AggregateError ? (error.errors as unknown[]).map(reasonOf).filter(Boolean) : [];
  return inner.length > 0 ? inner.join('; ') : ((error as { code?: string }).code ?? error.name);
}

// --- SQLite ---------------------------------------------------------------------------------------

interface Waiter {
  kind: 'statement' | 'transaction';
  admit(): void;
  timer: NodeJS.Timeout;
}

function openSqlite(options: StateDatabaseOptions): StateDatabase {
  return sqliteStateOf(openDatabase(options.sqlitePath, { migrate: options.migrate ?? true }), options);
}

/**
 * The state database over a SQLite database already open (the daemon's, opened before its services; a test's).
 * Its `close` closes the handle.
 */
export function sqliteStateOf(
  handle: DatabaseHandle,
  options: Pick<StateDatabaseOptions, 'waitLimitMs'> = {},
): StateDatabase {
  const sqlite = handle.sqlite;
  const waitLimitMs = options.waitLimitMs ?? 5_000;
  /*
   * The one audited cast. Sound because a repository uses only the query surface both drizzle
   * dialects share (select/insert/update/delete builders, `returning`, `onConflictDoUpdate`, `eq`…;
   * each awaitable), on tables whose row types are equal in both dialects (asserted per table), and
   * every repository test runs on both dialects (test/support/dialects.ts). What differs goes through
   * dialect.ts. `execute` and `for` do not exist on SQLite: dialect.ts's `rowsOf` and `forUpdate`.
   */
  const db = handle.db as unknown as StateDb;

  // The serialiser: one transaction at a time on the connection; statements wait while one is open or waiting.
  let transactionOpen = false;
  /** Statements admitted and not yet settled: a transaction begins only when there are none. */
  let statements = 0;
  const waiting: Waiter[] = [];
  /** A transaction is open or something waits: the one check a statement makes. */
  let blocked = false;

  const wait = (kind: Waiter['kind']) =>
    new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        kind,
        admit: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1);
          reject(new StateWaitTimeoutError(waitLimitMs));
          admitNext();
        }, waitLimitMs),
      };
      waiting.push(waiter);
      blocked = true;
    });

  /** Admits waiters in order: statements while no transaction is open, a transaction when nothing runs. */
  function admitNext(): void {
    while (waiting.length > 0 && !transactionOpen) {
      const next = waiting[0]!;
      if (next.kind === 'transaction') {
        if (statements > 0) break;
        waiting.shift();
        transactionOpen = true;
        next.admit();
        break;
      }
      waiting.shift();
      statements++;
      next.admit();
    }
    blocked = transactionOpen || waiting.length > 0;
  }

  async function run<T>(work: (db: StateDb) => T | PromiseLike<T>, tx?: StateDb): Promise<T> {
    if (tx) return work(tx);
    if (blocked) await wait('statement');
    else statements++;
    try {
      return await work(db);
    } finally {
      statements--;
      if (statements === 0 && blocked) admitNext();
    }
  }

  let savepoints = 0;
  /** The `tx` a body gets: the database, whose `transaction` is a savepoint of the open transaction. */
  const tx = Object.create(db, {
    transaction: {
      value: async <T>(body: (inner: StateDb) => Promise<T>): Promise<T> => {
        const name = `sitewarden_${++savepoints}`;
        sqlite.exec(`SAVEPOINT ${name}`);
        try {
          const result = await body(tx);
          sqlite.exec(`RELEASE ${name}`);
          return result;
        } catch (error) {
          sqlite.exec(`ROLLBACK TO ${name}`);
          sqlite.exec(`RELEASE ${name}`);
          throw error;
        } finally {
          savepoints--;
        }
      },
    },
  }) as StateDb;

  async function transaction<T>(body: (tx: StateDb) => Promise<T>): Promise<T> {
    if (blocked || statements > 0) await wait('transaction');
    else {
      transactionOpen = true;
      blocked = true;
    }
    try {
      sqlite.exec('BEGIN IMMEDIATE');
      try {
        const result = await body(tx);
        sqlite.exec('COMMIT');
        return result;
      } catch (error) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
        throw error;
      }
    } finally {
      transactionOpen = false;
      admitNext();
    }
  }

  return {
    dialect: 'sqlite',
    db,
    sqlite,
    sqliteDb: handle.db,
    run,
    transaction,
    close: async () => handle.close(),
  };
}

// --- PostgreSQL -----------------------------------------------------------------------------------

/**
 * Session advisory locks of the daemon, `pg_advisory_lock(namespace, key)`: the namespace keeps them
 * apart from other users of the database and from each other (a site's lock is
 * `(SITE_LOCK_NAMESPACE, hashtext(id))`, 0x53570001, in src/jobs/pg-queue-site-lock.ts).
 */
export const ADVISORY_LOCK_NAMESPACE = 0x53570000; // "SW"
export const MIGRATIONS_LOCK_KEY = 1;
// Key 2, transaction-scoped: the fleet totals' turn (FLEET_TOTALS_LOCK_KEY, src/fleet/fleet.triggers.ts).

/** host:port/database of a connection URL, for messages: never its user's password. */
function whereOf(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
    return `${host}:${parsed.port || '5432'}/${decodeURIComponent(parsed.pathname.slice(1)) || '(default database)'}`;
  } catch {
    return '(an unreadable database URL)';
  }
}

async function openPostgres(url: string, options: StateDatabaseOptions): Promise<StateDatabase> {
  const where = whereOf(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
  });
  const onConnectionError = options.onConnectionError ?? (() => undefined);
  pool.on('error', onConnectionError);
  // pg-pool listens for an idle connection's errors only: one that ends while checked out between two
  // statements (a transaction's) would otherwise be an unhandled 'error' event, the process's end. Its
  // next statement fails instead, and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', onConnectionError));
  const db = drizzlePg(pool);

  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StateDatabaseUnavailableError(where, error);
  }
  try {
    if (options.migrate ?? true) {
      // On a connection of its own, held for the whole run: two processes starting at once take turns,
      // and the second finds nothing left to apply.
      await client.query('select pg_advisory_lock($1, $2)', [ADVISORY_LOCK_NAMESPACE, MIGRATIONS_LOCK_KEY]);
      try {
        await migratePg(drizzlePg(client), { migrationsFolder: findMigrationsFolder('drizzle-pg') });
      } finally {
        await client.query('select pg_advisory_unlock($1, $2)', [ADVISORY_LOCK_NAMESPACE, MIGRATIONS_LOCK_KEY]);
      }
    } else {
      await client.query('select 1');
    }
  } catch (error) {
    client.release(true);
    await pool.end().catch(() => undefined);
    throw error;
  }
  client.release();

  return {
    dialect: 'postgres',
    db,
    sqlite: undefined,
    sqliteDb: undefined,
    run: async (work, tx) => work(tx ?? db),
    transaction: (body) => db.transaction((tx) => body(tx)),
    close: () => pool.end(),
  };
}
