import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { getTableColumns, getTableName, sql, type Column, type SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { rowDecoder } from './row-decoder.js';
import type { StateDb } from './state-db.js';

/**
 * Tables copied from a SQLite database into PostgreSQL, and the proof of the copy (issue 34: `sitewarden cluster
 * import`, docs/cluster.md). Each table is read in its primary key's order, a page at a time (memory stays bounded
 * whatever its size), its rows as drizzle decodes them from SQLite and written as drizzle encodes them for
 * PostgreSQL: booleans, dates and JSON convert as they do for the repositories, whose row types are equal per table.
 *
 * The proof is a tally per table on each side: the row count and a SHA-256 over every row in key order, each row
 * its values as drizzle returns them (a date as its instant, a JSON column as its value with sorted keys: jsonb
 * keeps the value, not the text). The target's tally is read back through a cursor of the same transaction, so a
 * difference is found before anything is committed. A text key is ordered by its bytes on both sides (`collate
 * "C"` on PostgreSQL, SQLite's own order), whatever the database's collation.
 */

/** A table of both dialects: the SQLite one read, the PostgreSQL one written. */
export interface TablePair {
  readonly name: string;
  readonly sqlite: SQLiteTable;
  readonly postgres: PgTable;
}

/** A table's rows on one side: how many, and their digest (hex). */
export interface TableTally {
  rows: number;
  digest: string;
}

type Row = Record<string, unknown>;

/** A pair whose row types are equal (the compiler checks it here), under the tables' common name. */
export function tablePair<P extends PgTable>(
  sqlite: SQLiteTable & { $inferSelect: P['$inferSelect']; $inferInsert: P['$inferInsert'] },
  postgres: P,
): TablePair {
  const name = getTableName(postgres);
  const sqliteName = getTableName(sqlite);
  if (sqliteName !== name) throw new Error(`the tables ${sqliteName} and ${name} are not one table of two dialects`);
  return { name, sqlite, postgres };
}

/**
 * The pairs in an order that writes a referenced table before the tables whose foreign keys reference it.
 * A reference to a table not in the list is refused: its rows would have nothing to point at.
 */
export function inForeignKeyOrder(pairs: readonly TablePair[]): TablePair[] {
  const byName = new Map(pairs.map((pair) => [pair.name, pair]));
  const ordered: TablePair[] = [];
  const visiting = new Set<string>();
  const visit = (pair: TablePair) => {
    if (ordered.includes(pair)) return;
    if (visiting.has(pair.name)) throw new Error(`the foreign keys of ${pair.name} form a cycle`);
    visiting.add(pair.name);
    for (const key of getTableConfig(pair.postgres).foreignKeys) {
      const referenced = getTableConfig(key.reference().foreignTable).name;
      const target = byName.get(referenced);
      if (!target) throw new Error(`${pair.name} references ${referenced}, which is not copied`);
      if (target !== pair) visit(target);
    }
    visiting.delete(pair.name);
    ordered.push(pair);
  };
  for (const pair of pairs) visit(pair);
  return ordered;
}

/** The property names of a table's primary key columns, in the key's order. */
function keyOf(table: PgTable): string[] {
  const config = getTableConfig(table);
  const keyColumns = config.primaryKeys[0]?.columns ?? config.columns.filter((column) => column.primary);
  if (keyColumns.length === 0) throw new Error(`${config.name} has no primary key to read it in order by`);
  // By SQL name: a composite key's columns are copies of the table's.
  const names = new Map(Object.entries(getTableColumns(table)).map(([key, column]) => [column.name, key]));
  return keyColumns.map((column) => names.get(column.name)!);
}

/** Rows per page: at most a thousand, and a statement's parameters well under PostgreSQL's 65,535. */
function pageSizeOf(table: PgTable): number {
  return Math.min(1_000, Math.floor(30_000 / Object.keys(getTableColumns(table)).length));
}

/** The SQLite table's rows in key order, a page at a time, decoded as drizzle decodes them (one statement, streamed). */
function* sqlitePages(sqlite: Database.Database, pair: TablePair): Generator<Row[]> {
  const columns = getTableColumns(pair.sqlite);
  const query = drizzle(sqlite)
    .select()
    .from(pair.sqlite)
    .orderBy(...keyOf(pair.postgres).map((key) => columns[key]!))
    .toSQL();
  const decode = rowDecoder(pair.sqlite) as (values: unknown[]) => Row;
  const size = pageSizeOf(pair.postgres);
  let page: Row[] = [];
  for (const values of sqlite
    .prepare(query.sql)
    .raw(true)
    .iterate(...query.params) as IterableIterator<unknown[]>) {
    page.push(decode(values));
    if (page.length === size) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/** The PostgreSQL table's rows in the same order, through a cursor of the transaction `tx`, decoded by drizzle's columns. */
async function* postgresPages(tx: StateDb, pair: TablePair): AsyncGenerator<Row[]> {
  const columns = Object.entries(getTableColumns(pair.postgres));
  const byBytes = keyOf(pair.postgres).map((key) => {
    const column = getTableColumns(pair.postgres)[key]!;
    return column.getSQLType() === 'text' ? sql`${column} collate "C"` : sql`${column}`;
  });
  const query = tx
    .select()
    .from(pair.postgres)
    .orderBy(...byBytes)
    .getSQL();
  const cursor = sql.identifier(`sitewarden_copy_${pair.name}`);
  await tx.execute(sql`declare ${cursor} no scroll cursor for ${query}`);
  try {
    for (;;) {
      const { rows } = await tx.execute<Row>(
        sql`fetch forward ${sql.raw(String(pageSizeOf(pair.postgres)))} from ${cursor}`,
      );
      if (rows.length === 0) return;
      yield rows.map((raw) => {
        const row: Row = {};
        for (const [key, column] of columns) {
          const value = raw[column.name];
          row[key] = value === null || value === undefined ? null : (column as Column).mapFromDriverValue(value);
        }
        return row;
      });
    }
  } finally {
    await tx.execute(sql`close ${cursor}`);
  }
}

/** Counts rows and hashes their values, in the order given, the same way on either side. */
function createTally(pair: TablePair): { add(rows: Row[]): void; done(): TableTally } {
  // Every column the tables share, by property name; JSON ones compared as values (jsonb does not keep the text).
  const columns = Object.entries(getTableColumns(pair.postgres)).map(([key, column]) => ({
    key,
    json: /^jsonb?$/.test(column.getSQLType()),
  }));
  const hash = createHash('sha256');
  let rows = 0;
  return {
    add(page) {
      for (const row of page) {
        hash.update(JSON.stringify(columns.map(({ key, json }) => comparable(row[key], json))));
        hash.update('\n');
      }
      rows += page.length;
    },
    done: () => ({ rows, digest: hash.digest('hex') }),
  };
}

function comparable(value: unknown, json: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return { date: value.getTime() };
  if (json) return sortedKeys(typeof value === 'string' ? parsedJson(value) : value);
  return value;
}

/** JSON text as a value to compare, any shape (both sides are digested alike; nothing reads it as a type). */
function parsedJson(text: string): unknown {
  const parsed: unknown = JSON.parse(text);
  return parsed;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Row)[key])]),
  );
}

/** Copies a table's rows from SQLite into PostgreSQL on `tx`, a page per statement; answers the source's tally. */
export async function copyTable(sqlite: Database.Database, tx: StateDb, pair: TablePair): Promise<TableTally> {
  const tally = createTally(pair);
  for (const page of sqlitePages(sqlite, pair)) {
    tally.add(page);
    await tx.insert(pair.postgres).values(page);
  }
  return tally.done();
}

/** The table's tally on PostgreSQL, read on `tx` (the copy's transaction sees its own rows). */
export async function tallyOnPostgres(tx: StateDb, pair: TablePair): Promise<TableTally> {
  const tally = createTally(pair);
  for await (const page of postgresPages(tx, pair)) tally.add(page);
  return tally.done();
}

/** The names among `tables` that hold a row on PostgreSQL. */
export async function tablesHoldingRows(tx: StateDb, tables: readonly string[]): Promise<string[]> {
  const held: string[] = [];
  for (const table of tables) {
    const { rows } = await tx.execute<{ held: boolean }>(
      sql`select exists (select 1 from ${sql.identifier(table)}) as held`,
    );
    if (rows[0]?.held) held.push(table);
  }
  return held;
}

/**
 * Turns the tables' own triggers off on `tx` until `restore` (an `alter table`, undone with the transaction if it
 * fails): the rows copied are the source's as they are, read models included, not what the triggers would make of
 * them. It also keeps other writers out of the tables until the transaction ends. Needs the tables' owner.
 */
export async function suppressTriggers(tx: StateDb, tables: readonly string[]): Promise<() => Promise<void>> {
  const alter = async (how: SQL) => {
    for (const table of tables) await tx.execute(sql`alter table ${sql.identifier(table)} ${how} trigger user`);
  };
  await alter(sql`disable`);
  return () => alter(sql`enable`);
}

/**
 * Moves each identity (or serial) column of `tables` past the highest id it holds, or past `used` (SQLite's
 * `sqlite_sequence`: an autoincrement id once given and deleted is never given again), so the next insert
 * gets a new id.
 */
export async function resetIdentities(
  tx: StateDb,
  tables: readonly string[],
  used: ReadonlyMap<string, number>,
): Promise<void> {
  const { rows } = await tx.execute<{ table_name: string; column_name: string }>(
    sql`select table_name, column_name from information_schema.columns
        where table_schema = current_schema() and (is_identity = 'YES' or column_default like 'nextval(%')`,
  );
  for (const { table_name: table, column_name: column } of rows) {
    if (!tables.includes(table)) continue;
    const { rows: top } = await tx.execute<{ top: string }>(
      sql`select coalesce(max(${sql.identifier(column)}), 0)::text as top from ${sql.identifier(table)}`,
    );
    const next = Math.max(Number(top[0]?.top ?? 0), used.get(table) ?? 0);
    if (next > 0)
      await tx.execute(sql`select setval(pg_get_serial_sequence(quote_ident(${table}), ${column}), ${next})`);
  }
}
