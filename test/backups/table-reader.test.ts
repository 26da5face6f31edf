import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createConnector } from '../../src/wordpress/connector-client.js';
import { BATCH_BYTES, readTables, rowMargin } from '../../src/backups/table-reader.js';
import { batchHeader } from '../../src/backups/sql-dump.js';
import { checkSiteAnswer, type WordPressSession } from '../../src/wordpress/wordpress-client.js';

/**
 * Reading a site's tables with a connector that lies: every answer goes through the same
 * schema check as a real site's (session.call with its zod schema), and every hostile answer
 * fails the table step with a problem naming the table — never a loop, never a stored batch.
 */
const CREATE =
  'CREATE TABLE `wp_log` (\n  `id` int(11) NOT NULL,\n  `data` blob DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB';
const HEADER = batchHeader('wp_log', ['id', 'data']);
const batch = (ids: number[]) =>
  `${HEADER}${ids.map((id) => `(${id},X'${Buffer.from(`row ${id}`).toString('hex')}')`).join(',\n')};\n`;
const honestTable = (rows: number, create = CREATE) => ({
  name: 'wp_log',
  create,
  rows,
  primaryKey: ['id'],
  checksum: '42',
  bytes: rows * 64,
});

type RowsAnswer = (query: Record<string, string | number | undefined>, call: number) => unknown;

/** The connector, over a session that answers like the site would, checked as a real session checks. */
function lyingSite({ tables = [honestTable(3)], rows }: { tables?: unknown[]; rows: RowsAnswer }) {
  const calls = { rows: 0 };
  const session = {
    async call(
      _method: string,
      route: string,
      options: {
        query?: Record<string, string | number | undefined>;
        schema?: Parameters<typeof checkSiteAnswer>[0];
      } = {},
    ) {
      const answer = route.endsWith('backup/tables') ? { tables } : rows(options.query ?? {}, calls.rows++);
      if (calls.rows > 10_000) throw new Error('the reader keeps asking: it would loop forever');
      return options.schema ? checkSiteAnswer(options.schema, answer, route) : answer;
    },
  } as unknown as WordPressSession;
  return { connector: createConnector(session, { operationTimeoutMs: 1000 }), calls };
}

async function read(site: ReturnType<typeof lyingSite>, onBytes?: (bytes: number) => void) {
  const stored = new Map<string, Buffer>();
  const put = async (content: Buffer) => {
    const hash = createHash('sha256').update(content).digest('hex');
    stored.set(hash, content);
    return hash;
  };
  const progress = { tables: 0, tablesDone: 0, rows: 0, bytesTransferred: 0 };
  const run = readTables({
    connector: site.connector,
    store: { has: async (hash) => stored.has(hash) },
    previous: [],
    progress,
    report: () => undefined,
    put,
    onBytes,
  });
  return { run, stored, progress };
}

const tableProblem = (name: string) => ({
  problem: expect.objectContaining({ name }),
  extensions: expect.objectContaining({ table: 'wp_log' }),
  detail: expect.stringContaining('"wp_log"'),
});

describe('reading tables from a site', () => {
  it('keeps an honest table’s pages, counted, and reports every byte received', async () => {
    const site = lyingSite({
      rows: (query) =>
        query['after'] === undefined
          ? { sql: batch([1, 2]), rows: 2, next: { key: ['2'] } }
          : { sql: batch([3]), rows: 1, next: null },
    });
    const bytes: number[] = [];
    const { run, stored, progress } = await read(site, (n) => bytes.push(n));
    const [table] = await run;
    expect(table).toMatchObject({
      name: 'wp_log',
      rows: 3,
      batches: [expect.any(String), expect.any(String)],
      schema: { columns: [{ name: 'id' }, { name: 'data' }] },
    });
    expect(stored.size).toBe(2);
    expect(bytes).toEqual([Buffer.byteLength(batch([1, 2])), Buffer.byteLength(batch([3]))]);
    expect(progress).toMatchObject({ tables: 1, tablesDone: 1, rows: 3 });
  });

  const hostile: [string, Parameters<typeof lyingSite>[0], string][] = [
    [
      'a CREATE TABLE followed by DROP DATABASE',
      {
        tables: [honestTable(1, `${CREATE}; DROP DATABASE wordpress`)],
        rows: () => ({ sql: batch([1]), rows: 1, next: null }),
      },
      'backup-table-invalid',
    ],
    [
      'a GRANT smuggled into a default',
      {
        tables: [honestTable(1, CREATE.replace('DEFAULT NULL', "DEFAULT '' /*!*/; GRANT ALL ON *.* TO evil; /*'"))],
        rows: () => ({ sql: batch([1]), rows: 1, next: null }),
      },
      'backup-table-invalid',
    ],
    [
      'a CREATE USER smuggled into a comment',
      {
        tables: [honestTable(1, `${CREATE} COMMENT='x' /*!50000 ; CREATE USER evil */`)],
        rows: () => ({ sql: batch([1]), rows: 1, next: null }),
      },
      'backup-table-invalid',
    ],
    [
      'an INSERT batch with a second statement',
      { rows: () => ({ sql: `${batch([1, 2, 3])}DROP DATABASE wordpress;\n`, rows: 3, next: null }) },
      'backup-table-invalid',
    ],
    [
      'a batch of another table',
      { rows: () => ({ sql: batch([1]).replace('`wp_log`', '`wp_users`'), rows: 1, next: null }) },
      'backup-table-invalid',
    ],
    [
      'a page that miscounts its rows',
      { rows: () => ({ sql: batch([1, 2]), rows: 3, next: null }) },
      'backup-table-invalid',
    ],
    [
      'far fewer rows than declared',
      { tables: [honestTable(1000)], rows: () => ({ sql: batch([1]), rows: 1, next: null }) },
      'backup-table-invalid',
    ],
    [
      'a cursor that never moves',
      { rows: () => ({ sql: batch([1]), rows: 1, next: { key: ['1'] } }) },
      'backup-table-invalid',
    ],
    [
      'a cursor that moves forever',
      { rows: (_, call) => ({ sql: batch([call]), rows: 1, next: { offset: call + 1 } }) },
      'backup-table-invalid',
    ],
    [
      'an empty page that is not the last',
      { rows: (_, call) => ({ sql: '', rows: 0, next: { offset: call + 1 } }) },
      'backup-table-invalid',
    ],
    [
      'more rows than asked for',
      {
        tables: [honestTable(2001)],
        rows: () => ({ sql: batch(Array.from({ length: 2001 }, (_, i) => i)), rows: 2001, next: null }),
      },
      'backup-table-invalid',
    ],
    [
      'more bytes than asked for',
      {
        rows: () => ({
          sql: batch([1, 2]).replace("X'726f772031'", `X'${'00'.repeat(BATCH_BYTES)}'`),
          rows: 2,
          next: null,
        }),
      },
      'backup-table-invalid',
    ],
    [
      'a table it cannot read',
      {
        tables: [{ name: 'wp_log', error: "Table 'wp_log' is marked as crashed" }],
        rows: () => ({ sql: '', rows: 0, next: null }),
      },
      'backup-table-unreadable',
    ],
  ];

  it.each(hostile)('fails on %s, naming the table, without storing a batch', async (_, behaviour, problem) => {
    const site = lyingSite(behaviour);
    const { run, stored } = await read(site);
    await expect(run).rejects.toMatchObject(tableProblem(problem));
    // Bounded by the declared rows and their margin, one row a page at worst.
    expect(site.calls.rows).toBeLessThanOrEqual(3 + rowMargin(3) + 1);
    // Pages already checked may be stored; a page that breaks the rules never is.
    if (!['far fewer rows than declared', 'a cursor that never moves', 'a cursor that moves forever'].includes(_))
      expect(stored.size).toBe(0);
  });

  it('fails a rows page of the wrong shape with site-invalid-response naming the route, instead of looping', async () => {
    const site = lyingSite({ rows: () => ({ foo: 1 }) });
    const { run } = await read(site);
    await expect(run).rejects.toMatchObject({
      problem: expect.objectContaining({ name: 'site-invalid-response', status: 502 }),
      extensions: { route: 'sitewarden/v1/backup/rows' },
    });
    expect(site.calls.rows).toBe(1);
  });

  it('fails a table listing of the wrong shape with site-invalid-response naming the route', async () => {
    const site = lyingSite({
      tables: [{ name: 'wp_log', rows: 'many' }],
      rows: () => ({ sql: '', rows: 0, next: null }),
    });
    await expect((await read(site)).run).rejects.toMatchObject({
      problem: expect.objectContaining({ name: 'site-invalid-response' }),
      extensions: { route: 'sitewarden/v1/backup/tables' },
    });
  });

  it('stops when onBytes throws (the backup’s byte budget)', async () => {
    const site = lyingSite({ rows: (_, call) => ({ sql: batch([call]), rows: 1, next: { offset: call + 1 } }) });
    const { run } = await read(site, () => {
      throw new Error('over budget');
    });
    await expect(run).rejects.toThrow('over budget');
    expect(site.calls.rows).toBe(1);
  });

  it('accepts rows written during the backup within the margin', async () => {
    const site = lyingSite({
      tables: [honestTable(3)],
      rows: () => ({ sql: batch([1, 2, 3, 4, 5]), rows: 5, next: null }),
    });
    const [table] = await (await read(site)).run;
    expect(table!.batches).toHaveLength(1);
  });
});
