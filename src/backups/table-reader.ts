import { backupsProblems } from './backups.errors.js';
import type { BackupConnector, RowsCursor, SiteTable } from '../wordpress/connector-client.js';
import type { ManifestTableEntry } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import { countBatchRows } from './sql-dump.js';
import { parseCreateTable } from './sql-schema-parser.js';
import { isLegalIdentifier, type TableSchema } from './sql-schema.js';

const ROWS_PER_BATCH = 2000;
/** What the connector has always sent per batch; a single larger row comes alone. */
export const BATCH_BYTES = 512 * 1024;

/**
 * How far the rows received may be from the count the site declared: rows written while the
 * table is read in many requests (there is no snapshot across them). 100 rows plus 1 %; a
 * table that changed more is read again by the re-check below, and its new count applies.
 */
export const rowMargin = (declared: number) => 100 + Math.ceil(declared / 100);

export interface TableProgress {
  tables: number;
  tablesDone: number;
  rows: number;
  bytesTransferred: number;
}

type ListedTable = Exclude<SiteTable, { error: string }> & { schema: TableSchema };

/**
 * Reads every table of the site into batches of checked INSERT rows. Nothing the site sends is
 * taken on its word: a table it cannot read, a schema outside the grammar, a batch that is not
 * plain literal rows, a page larger than asked, a cursor that does not move, or a row count
 * outside the margin fails with a problem naming the table. Tables unchanged since `previous`
 * (same schema, checksum and row count, batches still stored) are not read again.
 */
export async function readTables({
  connector,
  store,
  previous,
  progress,
  report,
  put,
  onBytes,
  onDeclared,
}: {
  connector: Pick<BackupConnector, 'tables' | 'rows'>;
  store: Pick<ObjectStore, 'has'>;
  previous: ManifestTableEntry[];
  progress: TableProgress;
  report: () => void;
  /** Stores one batch; the object's hash. */
  put: (content: Buffer) => Promise<string>;
  /** Called with the size of every page of rows received, before it is kept; may throw to stop the backup. */
  onBytes?: (bytes: number) => void;
  /** Called once the tables are listed, with the most SQL text they may take (see `declaredSqlBytes`). */
  onDeclared?: (bytes: number) => void;
}): Promise<ManifestTableEntry[]> {
  const listed = await listTables();
  progress.tables = listed.length;
  onDeclared?.(listed.reduce((sum, table) => sum + declaredSqlBytes(table), 0));
  const previousTables = new Map(previous.map((table) => [table.name, table]));
  const tables: ManifestTableEntry[] = [];
  for (const table of listed) {
    const before = previousTables.get(table.name);
    const unchanged =
      before?.schema &&
      table.checksum !== null &&
      before.checksum === table.checksum &&
      before.rows === table.rows &&
      sameSchema(before.schema, table.schema);
    const batches = unchanged && (await allPresent(before.batches)) ? before.batches : await readRows(table);
    progress.rows += table.rows;
    progress.tablesDone++;
    tables.push(entry(table, batches));
    report();
  }

  // Each table is read in many requests, so there is no snapshot across them (nor, while it is
  // being written to, within one). A table whose checksum, row count or schema moved while the
  // backup read it is read once more, so the backup holds it as it was at a single later moment
  // unless writes keep coming (docs/design/backups.md, "Consistency").
  for (const later of await listTables()) {
    const index = tables.findIndex((table) => table.name === later.name);
    const read = tables[index];
    if (
      !read ||
      (later.checksum === read.checksum && later.rows === read.rows && sameSchema(later.schema, read.schema!))
    )
      continue;
    progress.rows += later.rows - read.rows;
    tables[index] = entry(later, await readRows(later));
  }
  return tables;

  async function listTables(): Promise<ListedTable[]> {
    const { tables: answer } = await connector.tables();
    const names = new Set<string>();
    return answer.map((table) => {
      if (!isLegalIdentifier(table.name)) throw invalid(table.name, 'its name is not a legal table name');
      if (names.has(table.name)) throw invalid(table.name, 'the site listed it twice');
      names.add(table.name);
      if ('error' in table)
        throw backupsProblems.tableUnreadable.create(
          `the site could not read its table ${JSON.stringify(table.name)}: ${table.error.slice(0, 500)}`,
          { table: table.name },
        );
      try {
        return { ...table, schema: parseCreateTable(table.create, table.name) };
      } catch (error) {
        throw invalid(table.name, `its CREATE TABLE is not one a backup carries: ${(error as Error).message}`);
      }
    });
  }

  async function readRows(table: ListedTable): Promise<string[]> {
    const columns = table.schema.columns.map((column) => column.name);
    const most = table.rows + rowMargin(table.rows);
    const batches: string[] = [];
    let received = 0;
    for (let after: RowsCursor | null = null; ;) {
      const page = await connector.rows(table.name, after, ROWS_PER_BATCH, BATCH_BYTES);
      const sql = Buffer.from(page.sql, 'utf8');
      onBytes?.(sql.length);
      progress.bytesTransferred += sql.length;
      if (page.rows > ROWS_PER_BATCH)
        throw invalid(
          table.name,
          `a page of rows holds ${page.rows} rows where at most ${ROWS_PER_BATCH} were asked for`,
        );
      if (sql.length > BATCH_BYTES && page.rows > 1)
        throw invalid(
          table.name,
          `a page of ${page.rows} rows holds ${sql.length} bytes where at most ${BATCH_BYTES} were asked for`,
        );
      if (page.rows === 0) {
        if (sql.length > 0 || page.next !== null) throw invalid(table.name, 'a page without rows is not the last one');
      } else {
        let counted: number;
        try {
          counted = countBatchRows(page.sql, table.name, columns);
        } catch (error) {
          throw invalid(
            table.name,
            `a page of rows is not plain INSERT rows of its columns: ${(error as Error).message}`,
          );
        }
        if (counted !== page.rows)
          throw invalid(table.name, `a page of rows says it holds ${page.rows} rows and holds ${counted}`);
        received += counted;
        if (received > most)
          throw invalid(
            table.name,
            `the site sent more than the ${table.rows} rows it declared (${received} so far, margin ${rowMargin(table.rows)})`,
          );
        batches.push(await put(sql));
      }
      if (page.next === null) break;
      if (after !== null && JSON.stringify(page.next) === JSON.stringify(after))
        throw invalid(table.name, 'the cursor to the next page of rows does not move');
      after = page.next;
    }
    if (received < table.rows - rowMargin(table.rows))
      throw invalid(
        table.name,
        `the site sent ${received} of the ${table.rows} rows it declared (margin ${rowMargin(table.rows)})`,
      );
    return batches;
  }

  async function allPresent(hashes: string[]): Promise<boolean> {
    for (const hash of hashes) if (!(await store.has(hash))) return false;
    return true;
  }
}

/**
 * The SQL text a table's rows may take: text and binary values travel as hex (twice their bytes),
 * plus each row's framing. The site's data length is the server's estimate, so the budget's factor
 * and slack cover the rest.
 */
const declaredSqlBytes = (table: { bytes: number; rows: number }) => 2 * table.bytes + 64 * table.rows + 4096;

const invalid = (table: string, what: string) =>
  backupsProblems.tableInvalid.create(`the site's table ${JSON.stringify(table)} cannot be backed up: ${what}`, {
    table,
  });

const sameSchema = (a: TableSchema, b: TableSchema) => JSON.stringify(a) === JSON.stringify(b);

const entry = (table: ListedTable, batches: string[]): ManifestTableEntry => ({
  name: table.name,
  schema: table.schema,
  rows: table.rows,
  primaryKey: table.primaryKey,
  checksum: table.checksum,
  batches,
});
