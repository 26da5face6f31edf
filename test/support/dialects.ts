import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import {
  openStateDatabase,
  type Dialect,
  type StateDatabase,
  type StateDatabaseOptions,
} from '../../src/db/state-db.js';
import { createTestDatabase } from './postgres.js';

/**
 * One test body, two databases (issue 34, docs/design/cluster-state.md): a repository's tests run on
 * SQLite and on PostgreSQL by
 *
 *   describe.each(dialects)('on %s', (dialect) => {
 *     const state = stateDatabaseFor(dialect, 'jobs-repository');
 *     it('…', async () => { const repository = createJobsRepository(state()); … });
 *   });
 *
 * Each test gets an empty, migrated database: on SQLite a fresh `:memory:` one (opening it costs
 * little), on PostgreSQL the file's own database of the run's cluster (test/support/postgres.ts) with
 * drizzle-pg/ applied once, and every table of its public schema truncated before each test
 * (`CREATE DATABASE` costs tens of milliseconds; the migrations' record is in the `drizzle` schema and
 * stays). `SITEWARDEN_TEST_DIALECT` (`sqlite` or `postgres`) keeps one of the two.
 */
export const dialects: readonly Dialect[] = (['sqlite', 'postgres'] as const).filter(
  (dialect) => !process.env.SITEWARDEN_TEST_DIALECT || process.env.SITEWARDEN_TEST_DIALECT === dialect,
);

/**
 * A table's rows as the repositories read and write them: a PostgreSQL table and its SQLite table must give the
 * same, `expectTypeOf<RowsOf<typeof pg.x>>().toEqualTypeOf<RowsOf<typeof sqlite.x>>()` (checked by the compiler,
 * which names the first column that differs). A tuple: expect-type compares its elements as strictly as two
 * `toEqualTypeOf` calls would.
 */
export type RowsOf<Table extends { $inferSelect: unknown; $inferInsert: unknown }> = [
  read: Table['$inferSelect'],
  written: Table['$inferInsert'],
];

/** The file's PostgreSQL test database, made on first use and dropped after the file. */
export async function postgresTestUrl(label: string): Promise<string> {
  const database = await createTestDatabase(inject('postgresUrl'), label);
  afterAll(() => database.drop());
  return database.url;
}

/**
 * Registers the hooks of the surrounding describe and gives its tests the current database. `options`
 * are openStateDatabase's (a wait limit, a pool size) beside the URL and path the harness chooses.
 */
export function stateDatabaseFor(
  dialect: Dialect,
  label: string,
  options: Omit<StateDatabaseOptions, 'url' | 'sqlitePath'> = {},
): () => StateDatabase {
  let current: StateDatabase | undefined;
  let drop: (() => Promise<void>) | undefined;

  if (dialect === 'postgres') {
    beforeAll(async () => {
      const database = await createTestDatabase(inject('postgresUrl'), label);
      drop = database.drop;
      current = await openStateDatabase({ ...options, url: database.url, sqlitePath: ':memory:' });
    });
    beforeEach(async () => {
      const state = current!;
      const { rows } = await state.db.execute<{ name: string }>(
        `select quote_ident(tablename) as name from pg_tables where schemaname = 'public'`,
      );
      if (rows.length > 0)
        await state.db.execute(`truncate ${rows.map((row) => row.name).join(', ')} restart identity cascade`);
    });
    afterAll(async () => {
      await current?.close();
      await drop?.();
    });
  } else {
    beforeEach(async () => {
      current = await openStateDatabase({ ...options, sqlitePath: ':memory:' });
    });
    afterEach(async () => {
      await current?.close();
      current = undefined;
    });
  }

  return () => {
    if (!current) throw new Error('the state database is opened by the hooks: use it inside a test');
    return current;
  };
}
