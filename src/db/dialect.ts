import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Dialect, StateDatabase, StateDb } from './state-db.js';

/**
 * What SQLite and PostgreSQL spell differently, for the repository bodies both share (issue 34,
 * docs/design/cluster-state.md). A helper takes the dialect (`state.dialect`) and gives the fragment or
 * the value of that dialect; everything else in a repository is drizzle's common query surface.
 */

/**
 * A feature's table for the dialect in use, typed as its PostgreSQL table. The SQLite table is accepted
 * only when its row types are the PostgreSQL table's (what a repository reads and writes is the same),
 * and runs only on the SQLite database (state-db.ts's cast, whose argument this shares).
 */
export function tableFor<P extends PgTable>(
  dialect: Dialect,
  tables: {
    sqlite: SQLiteTable & { $inferSelect: P['$inferSelect']; $inferInsert: P['$inferInsert'] };
    postgres: P;
  },
): P {
  return dialect === 'postgres' ? tables.postgres : (tables.sqlite as unknown as P);
}

/** The first row a query answered, or undefined: `db.select()…where(byId).then(firstRow)` on either dialect. */
export const firstRow = <T>(rows: readonly T[]): T | undefined => rows[0];

/**
 * Rows a write changed: `await db.update(…)` (or delete, or insert without `returning`) answers
 * better-sqlite3's `{ changes }` on SQLite and node-postgres's `{ rowCount }` on PostgreSQL.
 */
export function rowsChanged(result: { rowCount?: number | null } | { changes: number }): number {
  return 'changes' in result ? result.changes : (result.rowCount ?? 0);
}

/**
 * The rows of a raw `sql` query (`db.execute` is PostgreSQL's; SQLite's drizzle database has `all`).
 * Column names are the query's, values the driver's (a SQLite integer where PostgreSQL may give a string
 * for bigint: cast in the query).
 */
export async function rowsOf<Row extends Record<string, unknown>>(
  state: Pick<StateDatabase, 'dialect'>,
  db: StateDb,
  query: SQL,
): Promise<Row[]> {
  if (state.dialect === 'postgres') return (await db.execute(query)).rows as Row[];
  return (db as unknown as { all(query: SQL): Row[] }).all(query);
}

/**
 * The elements of a JSON array, as a table with one column, `value`, each element as JSON text (SQLite's
 * `json_each`; PostgreSQL's `jsonb_array_elements`). `json` is a JSON column or a parameter holding JSON
 * text; `key`, a key of the object it holds whose value is the array. Use it in a `from`, with an alias:
 * sql`select 1 from ${jsonArrayElements(d, jobs.progress, 'sites')} s where ${jsonField(d, sql`s.value`, 'siteId')} = …`.
 */
export function jsonArrayElements(dialect: Dialect, json: SQLWrapper, key?: string): SQL {
  return arrayElements(dialect, json, key, sql`jsonb_array_elements`);
}

/**
 * The elements of a JSON array of strings or numbers as text, one column `value`: a list bound as one
 * JSON parameter, `in (select value from ${jsonTextElements(d, sql.placeholder('ids'))})`, is one
 * prepared statement whatever its length (bulk-updates.repository.ts's `inJsonList`).
 */
export function jsonTextElements(dialect: Dialect, json: SQLWrapper, key?: string): SQL {
  return arrayElements(dialect, json, key, sql`jsonb_array_elements_text`);
}

/** SQLite's `json_each` (its `value` is JSON text or the scalar) or PostgreSQL's `expand` of the (keyed) array. */
function arrayElements(dialect: Dialect, json: SQLWrapper, key: string | undefined, expand: SQL): SQL {
  if (dialect === 'postgres') {
    const array =
      key === undefined ? sql`cast(${json} as jsonb)` : sql`(cast(${json} as jsonb) -> cast(${key} as text))`;
    return sql`${expand}(${array})`;
  }
  return key === undefined ? sql`json_each(${json})` : sql`json_each(${json}, ${`$.${key}`})`;
}

/** An object's value at `key` as text (SQLite's `json_extract` gives a string or number; PostgreSQL's `->>` text). */
export function jsonField(dialect: Dialect, json: SQLWrapper, key: string): SQL {
  return dialect === 'postgres'
    ? sql`(cast(${json} as jsonb) ->> cast(${key} as text))`
    : sql`json_extract(${json}, ${`$.${key}`})`;
}

/**
 * Whether a value is JSON: SQLite stores JSON as text that may not be (`json_valid` guards a query that
 * looks inside); PostgreSQL's `jsonb` refused anything else on write.
 */
export function isJson(dialect: Dialect, json: SQLWrapper): SQL {
  return dialect === 'postgres' ? sql`true` : sql`(json_valid(${json}) = 1)`;
}

/**
 * An aggregate's text values joined by commas, in no order (SQLite's `group_concat`; PostgreSQL's
 * `string_agg`), each distinct value once with `distinct`: null over no rows, on both.
 */
export function commaJoined(dialect: Dialect, value: SQLWrapper, { distinct = false } = {}): SQL<string | null> {
  const of = distinct ? sql`distinct ${value}` : sql`${value}`;
  return dialect === 'postgres' ? sql`string_agg(${of}, ',')` : sql`group_concat(${of})`;
}

/**
 * `column like pattern`, ignoring the case of ASCII letters as SQLite's LIKE does (PostgreSQL's `ilike`;
 * it ignores the case of every letter). `\` escapes the pattern's `%` and `_`.
 */
export function likeIgnoringCase(dialect: Dialect, column: SQLWrapper, pattern: string): SQL {
  return dialect === 'postgres'
    ? sql`(${column} ilike ${pattern} escape '\\')`
    : sql`(${column} like ${pattern} escape '\\')`;
}

/**
 * `column` starts with `prefix`, compared character by character on both dialects, so that a key's prefix reads
 * as a range of its index (a bulk update's children, `<bulkId>-00000`…). SQLite compares text by its bytes: the
 * range `>= prefix` and below `prefix` followed by U+FFFF. PostgreSQL's `<` follows the database's collation, in
 * which `-` may sort anywhere (a language's collation weighs punctuation last), so there it is `like 'prefix%'`
 * (the prefix's `%`, `_` and `\` escaped): right in any collation, and read as a range of a btree index by the
 * planner when the collation is C (as the test cluster's); in another, a scan of the table.
 */
export function startsWith(dialect: Dialect, column: SQLWrapper, prefix: string): SQL {
  if (dialect === 'postgres') return sql`(${column} like ${`${prefix.replace(/[\\%_]/g, '\\$&')}%`} escape '\\')`;
  return sql`(${column} >= ${prefix} and ${column} < ${`${prefix}\uffff`})`;
}

/**
 * SQLite's `indexed by <index>`, written after a table of a `from` whose index SQLite's planner would not
 * choose by itself (a window over one site's rows); nothing on PostgreSQL, whose planner is not told.
 */
export function indexedBy(dialect: Dialect, index: string): SQL {
  return dialect === 'postgres' ? sql`` : sql.raw(`indexed by ${index}`);
}

/**
 * A select that reads to decide a write in a transaction, its rows locked on PostgreSQL (`for update`:
 * another process's transaction waits for this one). SQLite needs none: its transactions are
 * serialised (`BEGIN IMMEDIATE`, one at a time in the process), and its select builder has no `for`.
 */
export function forUpdate<Q extends { for(strength: 'update'): unknown }>(
  dialect: Dialect,
  query: Q,
): ReturnType<Q['for']> {
  // The same select, without `for` in its type (drizzle's `for` drops itself from the builder's type).
  return (dialect === 'postgres' ? query.for('update') : query) as ReturnType<Q['for']>;
}

/**
 * Writes made together in one transaction, built by `build` on the database (inserts, updates, deletes,
 * none of them read to decide another): a site's tags replaced, a user's codes renewed. On SQLite they run
 * as one better-sqlite3 transaction with no await between them, so that no statement of a repository not
 * yet on the state database (issue 34: they write on the same connection without waiting) can fall inside
 * it and be rolled back with it; on PostgreSQL, one after the other in a transaction. A read that decides
 * a write is a conditional statement instead, or a `state.transaction` with `forUpdate`.
 */
export async function writeTogether(
  state: StateDatabase,
  build: (db: StateDb) => readonly PromiseLike<unknown>[],
): Promise<void> {
  await together(state, build, 'run');
}

/**
 * Writes made together as `writeTogether` makes them, each with `returning`: the rows they answered, in
 * order, all written or none. A write of more rows than one statement may bind (a claim of a thousand
 * sites, `insert … on conflict do nothing returning`, in statements of a few hundred) answers what it wrote.
 */
export async function writeTogetherReturning<Row>(
  state: StateDatabase,
  build: (db: StateDb) => readonly PromiseLike<readonly Row[]>[],
): Promise<Row[]> {
  const answers = await together(state, build, 'all');
  return answers.flat();
}

/** `build`'s statements in one transaction, each run for its rows (`all`) or not (`run`): what each answered. */
async function together<T>(
  state: StateDatabase,
  build: (db: StateDb) => readonly PromiseLike<T>[],
  how: 'run' | 'all',
): Promise<T[]> {
  const sqlite = state.sqlite;
  if (sqlite)
    return state.run((db) => {
      const writes = build(db) as unknown as readonly Record<typeof how, () => T>[];
      return sqlite.transaction(() => writes.map((write) => write[how]()))();
    });
  return state.transaction(async (tx) => {
    const answers: T[] = [];
    for (const write of build(tx)) answers.push(await write);
    return answers;
  });
}

/**
 * Whether a statement failed on a unique index or primary key: SQLite's `SQLITE_CONSTRAINT_UNIQUE` (or
 * `_PRIMARYKEY`), PostgreSQL's `23505`. Drizzle wraps the driver's error of an awaited statement in its own
 * (`DrizzleQueryError`, the driver's as its `cause`), so both are looked at.
 */
export function isUniqueViolation(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 3; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505') return true;
  }
  return false;
}
