import { backupsProblems } from './backups.errors.js';
import type { Manifest, ManifestTableEntry, OpenedManifest } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import { parseCreateTable } from './sql-schema-parser.js';
import { emitCreateTable, quoteIdentifier, type TableSchema } from './sql-schema.js';

/**
 * Row batches travel as the connector writes them: one `INSERT INTO `table` (`col`,…) VALUES`
 * followed by rows of literals, each NULL, a number or X'hex'. Nothing else is accepted, so a
 * batch cannot carry a second statement, and its rows are counted as it is checked.
 */
const LITERAL = "(?:NULL|-?\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?|X'[0-9A-Fa-f]*')";
const tuples = new Map<number, RegExp>();

function tupleOf(arity: number): RegExp {
  let pattern = tuples.get(arity);
  if (!pattern) {
    pattern = new RegExp(`\\(${LITERAL}(?:,${LITERAL}){${arity - 1}}\\)(,\\n|;\\n)`, 'y');
    tuples.set(arity, pattern);
  }
  return pattern;
}

export const batchHeader = (table: string, columns: string[]) =>
  `INSERT INTO ${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(',')}) VALUES\n`;

/** The number of rows in a batch of `table` with exactly `columns`; throws saying what breaks the grammar. */
export function countBatchRows(sql: string, table: string, columns: string[]): number {
  const header = batchHeader(table, columns);
  if (!sql.startsWith(header)) throw new Error('the batch does not begin with INSERT INTO the table and its columns');
  const tuple = tupleOf(columns.length);
  tuple.lastIndex = header.length;
  for (let rows = 1; ; rows++) {
    const match = tuple.exec(sql);
    if (!match)
      throw new Error(
        `row ${rows} of the batch is not ${columns.length} literals (NULL, a number or X'hex') followed by "," or ";"`,
      );
    if (match[1] === ';\n') {
      if (tuple.lastIndex !== sql.length) throw new Error(`the batch goes on after its statement ends (row ${rows})`);
      return rows;
    }
  }
}

/** A table's schema from its manifest entry; entries written before the daemon parsed schemas are parsed now. */
export function schemaOf(table: ManifestTableEntry): TableSchema {
  if (table.schema) return table.schema;
  try {
    return parseCreateTable(table.create ?? '', table.name);
  } catch (error) {
    throw backupsProblems.tableUnsafe.create(
      `the backup's table ${JSON.stringify(table.name)} cannot be written as a safe SQL dump: ${(error as Error).message}`,
      { table: table.name },
    );
  }
}

/** A stored batch's row count; batches of backups taken before they were checked on arrival are checked here. */
export function storedBatchRows(sql: string, table: string, columns: string[]): number {
  try {
    return countBatchRows(sql, table, columns);
  } catch (error) {
    throw backupsProblems.tableUnsafe.create(
      `a batch of rows of the backup's table ${JSON.stringify(table)} is not plain INSERT rows: ${(error as Error).message}`,
      { table },
    );
  }
}

/**
 * The SQL dump of a backup, written by the daemon: SET, DROP TABLE IF EXISTS, CREATE TABLE
 * (from the parsed schema) and INSERT (each batch checked again) only, every name quoted.
 */
export async function writeSqlDump({
  manifest,
  store,
  write,
}: {
  manifest: Manifest | OpenedManifest;
  store: ObjectStore;
  write: (chunk: string | Buffer) => Promise<void>;
}): Promise<void> {
  const schemas = manifest.tables.map(schemaOf);
  // A comment ends at a line break: nothing the site controls may hold one.
  const safe = (text: string) =>
    Array.from(text, (character) => (character < ' ' || character === '\x7f' ? ' ' : character)).join('');
  await write(
    `-- Sitewarden backup of ${safe(manifest.siteUrl)} taken ${safe(manifest.createdAt)}\nSET NAMES utf8mb4;\nSET FOREIGN_KEY_CHECKS = 0;\nSET SQL_MODE = 'NO_AUTO_VALUE_ON_ZERO';\n`,
  );
  for (const [index, table] of manifest.tables.entries()) {
    const schema = schemas[index]!;
    await write(`\nDROP TABLE IF EXISTS ${quoteIdentifier(table.name)};\n${emitCreateTable(table.name, schema)};\n`);
    const columns = schema.columns.map((column) => column.name);
    for (const batch of table.batches) {
      const sql = (await store.read(batch)).toString('utf8');
      storedBatchRows(sql, table.name, columns);
      await write(sql);
    }
  }
  await write('\nSET FOREIGN_KEY_CHECKS = 1;\n');
}
