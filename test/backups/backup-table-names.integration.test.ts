import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { backups as backupsTable } from '../../src/backups/backups.table.js';
import { readManifest } from '../../src/backups/manifest.js';
import type { ObjectStore } from '../../src/backups/object-store.js';
import { batchHeader, writeSqlDump } from '../../src/backups/sql-dump.js';
import { emitCreateTable, quoteIdentifier } from '../../src/backups/sql-schema.js';
import { connectorCall, useBackupSite, verifyJob } from '../support/backup-site.js';
import { dumpStatementKinds } from '../support/sql-statements.js';

/**
 * Every table of a real WordPress site is backed up whatever its legal name, the dump the
 * daemon writes holds only the statements a dump needs, and a table the connector cannot
 * read fails the backup naming it rather than being left out.
 */
const bed = useBackupSite({}, { lean: true });
const api = (path = '') => `/api/sites/${bed.siteId}${path}`;

const ODD = ['wp_back`tick', 'wp_with space', 'wp_ütf8_表_✓'];
const COLUMNS = ['id', 'va`l ue', 'ñame'];
const ALLOWED = new Set(['SET', 'DROP TABLE IF EXISTS', 'CREATE TABLE', 'INSERT', 'LOCK TABLES', 'UNLOCK TABLES']);

/** PHP running SQL on names it quotes itself; the leading comment keeps wpdb from looking the table up by an unquoted name. */
const php = (sql: string) =>
  `$wpdb->query( ${JSON.stringify(`/**/${sql}`).replaceAll('$', '\\$')} ) !== false || exit( 1 );`;
/** One line per row, the same query on the site and on an imported copy. */
const rowsQuery = (table: string) =>
  `SELECT CONCAT_WS(',', ${COLUMNS.map((column) => `IFNULL(HEX(${quoteIdentifier(column)}), 'NULL')`).join(', ')}) FROM ${quoteIdentifier(table)} ORDER BY 1`;
const siteRows = async (table: string) =>
  JSON.parse(
    await bed.site.php(
      `global $wpdb; echo wp_json_encode( $wpdb->get_col( ${JSON.stringify(`/**/${rowsQuery(table)}`).replaceAll('$', '\\$')} ) );`,
    ),
  ) as string[];
const mariadb = (args: string[], input?: Buffer) =>
  execFileSync(
    'mariadb',
    ['--no-defaults', `--socket=${inject('mariadbSocket')}`, '-uroot', '--default-character-set=utf8mb4', ...args],
    { input, encoding: 'utf8' },
  );

async function backUp() {
  const queued = await bed.t.call('POST', api('/backups'));
  expect(queued.status, queued.text).toBe(202);
  await bed.t.services.backups.idle();
  return (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
const state: { backup?: any; rows?: Record<string, string[]> } = {};

describe('tables with any legal name', () => {
  it('are backed up (backticks, spaces, UTF-8), the backup completes and verifies', async () => {
    const statements = ODD.flatMap((table, index) => [
      `CREATE TABLE ${quoteIdentifier(table)} (${quoteIdentifier('id')} INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, ${quoteIdentifier('va`l ue')} VARBINARY(64) NULL, ${quoteIdentifier('ñame')} VARCHAR(40) NOT NULL DEFAULT 'it''s; DROP DATABASE x' COMMENT 'GRANT ALL') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
      `INSERT INTO ${quoteIdentifier(table)} (${quoteIdentifier('va`l ue')}, ${quoteIdentifier('ñame')}) VALUES (0x00ff60, 'é ${index}'), (NULL, 'tåble'), ('', DEFAULT)`,
    ]);
    // A WooCommerce-style table: what the dump's grammar must carry beyond core's tables.
    statements.push(
      "CREATE TABLE wp_wc_style (id bigint(20) unsigned NOT NULL AUTO_INCREMENT, status enum('wc-pending','it''s') NOT NULL DEFAULT 'wc-pending', flags set('a','b') DEFAULT NULL, total decimal(26,8) DEFAULT -1.5 COMMENT 'a ''comment''; DROP DATABASE x', updated timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, paid datetime(6) DEFAULT CURRENT_TIMESTAMP(6), meta json DEFAULT NULL, bits bit(3) DEFAULT b'101', legacy varchar(10) CHARACTER SET latin1 COLLATE latin1_german1_ci DEFAULT NULL, note text, PRIMARY KEY (id), UNIQUE KEY sf (status, flags), KEY t (total DESC), FULLTEXT KEY n (note)) ENGINE=InnoDB COMMENT='orders' ROW_FORMAT=DYNAMIC",
      "INSERT INTO wp_wc_style (status, flags, total, meta, note) VALUES ('it''s', 'a,b', 12.5, '[1,2]', 'first order')",
    );
    await bed.site.php(`global $wpdb; ${statements.map(php).join('\n')}`);
    state.rows = Object.fromEntries(
      await Promise.all(ODD.map(async (table) => [table, await siteRows(table)] as const)),
    );
    expect(state.rows[ODD[0]!]).toHaveLength(3);

    const backup = await backUp();
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed', reason: null });
    const manifest = await readManifest(bed.t.services.backups.store, backup.manifest);
    for (const table of ODD)
      expect(
        manifest.tables.find((entry) => entry.name === table),
        table,
      ).toMatchObject({ rows: 3, schema: { columns: COLUMNS.map((name) => expect.objectContaining({ name })) } });
    const verified = await verifyJob(bed.t, api(`/backups/${backup.id}/verify`));
    expect(verified.json).toMatchObject({ ok: true, problems: [] });
    state.backup = backup;
  });

  it('download as a database.sql of only the statements a dump needs, which imports into a fresh database with the same rows', async () => {
    const response = await bed.t.app.request(api(`/backups/${state.backup.id}/download`), {
      headers: { authorization: `Bearer ${bed.t.writeToken}` },
    });
    expect(response.status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-names-'));
    const database = `sw_names_${randomBytes(4).toString('hex')}`;
    try {
      writeFileSync(join(dir, 'backup.tar.gz'), Buffer.from(await response.arrayBuffer()));
      execFileSync('tar', ['xzf', 'backup.tar.gz', 'database.sql'], { cwd: dir });
      const dump = readFileSync(join(dir, 'database.sql'));
      const kinds = dumpStatementKinds(dump.toString('utf8'));
      expect(kinds.filter((kind) => !ALLOWED.has(kind))).toEqual([]);
      expect(kinds.filter((kind) => kind === 'CREATE TABLE').length).toBe(
        kinds.filter((kind) => kind === 'DROP TABLE IF EXISTS').length,
      );

      mariadb(['-e', `CREATE DATABASE ${database}`]);
      mariadb([database], dump);
      for (const table of ODD) {
        expect(
          mariadb([database, '-N', '--raw', '-e', rowsQuery(table)])
            .trim()
            .split('\n'),
          table,
        ).toEqual(state.rows![table]);
      }
      expect(
        mariadb([database, '-N', '--raw', '-e', 'SELECT status, flags, total, meta FROM wp_wc_style']).trim(),
      ).toBe("it's\ta,b\t12.50000000\t[1,2]");
    } finally {
      mariadb(['-e', `DROP DATABASE IF EXISTS ${database}`]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are restored: their rows come back and a table dropped since is there again', async () => {
    await bed.site.php(
      `global $wpdb; ${[`DELETE FROM ${quoteIdentifier(ODD[0]!)} WHERE ${quoteIdentifier('id')} = 1`, `UPDATE ${quoteIdentifier(ODD[2]!)} SET ${quoteIdentifier('ñame')} = 'changed'`, `DROP TABLE ${quoteIdentifier(ODD[1]!)}`].map(php).join('\n')}`,
    );
    const started = await bed.t.call('POST', api(`/backups/${state.backup.id}/restore`));
    expect(started.status, started.text).toBe(202);
    await bed.t.services.backups.idle();
    const restore = (await bed.t.call('GET', api(`/restores/${started.json.id}`))).json;
    expect(restore, JSON.stringify(restore)).toMatchObject({ status: 'completed', reason: null });
    for (const table of ODD) expect(await siteRows(table), table).toEqual(state.rows![table]);
  });
});

describe('backups taken before the daemon wrote its own dump (the site’s CREATE TABLE in the manifest)', () => {
  /** The completed backup, its manifest rewritten as such a backup held it, with each table's CREATE TABLE as `create` gives it. */
  async function asOldBackup(create: (name: string, siteCreate: string) => string): Promise<void> {
    const { store } = bed.t.services.backups;
    const manifest = await readManifest(store, state.backup.manifest);
    const names = Buffer.from(JSON.stringify(manifest.tables.map((table) => table.name))).toString('base64');
    const creates = JSON.parse(
      await bed.site.php(
        `global $wpdb; $out = array(); foreach ( json_decode( base64_decode( '${names}' ) ) as $t ) { $out[] = $wpdb->get_row( 'SHOW CREATE TABLE \`' . str_replace( '\`', '\`\`', $t ) . '\`', ARRAY_N )[1]; } echo wp_json_encode( $out );`,
      ),
    ) as string[];
    const old = {
      ...manifest,
      tables: manifest.tables.map(({ schema: _, ...table }, index) => ({
        ...table,
        create: create(table.name, creates[index]!),
      })),
    };
    const { hash } = await store.put(Buffer.from(JSON.stringify(old)));
    bed.t.database.db
      .update(backupsTable)
      .set({ manifestHash: hash })
      .where(eq(backupsTable.id, state.backup.id))
      .run();
  }
  const download = () =>
    bed.t.app.request(api(`/backups/${state.backup.id}/download`), {
      headers: { authorization: `Bearer ${bed.t.writeToken}` },
    });

  it('still download as a dump the daemon writes, and restore', async () => {
    await asOldBackup((_, create) => create);
    const response = await download();
    expect(response.status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-old-'));
    try {
      writeFileSync(join(dir, 'backup.tar.gz'), Buffer.from(await response.arrayBuffer()));
      execFileSync('tar', ['xzf', 'backup.tar.gz', 'database.sql'], { cwd: dir });
      expect(
        dumpStatementKinds(readFileSync(join(dir, 'database.sql'), 'utf8')).filter((kind) => !ALLOWED.has(kind)),
      ).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await bed.site.php(`global $wpdb; ${php(`DELETE FROM ${quoteIdentifier(ODD[2]!)}`)}`);
    const started = await bed.t.call('POST', api(`/backups/${state.backup.id}/restore`));
    await bed.t.services.backups.idle();
    expect((await bed.t.call('GET', api(`/restores/${started.json.id}`))).json).toMatchObject({
      status: 'completed',
      reason: null,
    });
    for (const table of ODD) expect(await siteRows(table), table).toEqual(state.rows![table]);
  });

  it('refuse to download or restore one whose CREATE TABLE carries another statement, naming the table', async () => {
    const table = ODD[0]!;
    await asOldBackup((name, create) => (name === table ? `${create};\nDROP DATABASE wordpress` : create));
    const response = await download();
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(await response.json()).toMatchObject({ type: '/problems/backup-table-unsafe', table });
    const started = await bed.t.call('POST', api(`/backups/${state.backup.id}/restore`));
    await bed.t.services.backups.idle();
    expect((await bed.t.call('GET', api(`/restores/${started.json.id}`))).json).toMatchObject({
      status: 'failed',
      reason: 'backup-table-unsafe',
    });
    for (const name of ODD) expect(await siteRows(name), name).toEqual(state.rows![name]);
  });
});

describe('the connector’s restore', () => {
  it('writes CREATE TABLE from a schema exactly as the daemon’s dump does', async () => {
    const manifest = await readManifest(bed.t.services.backups.store, state.backup.manifest);
    for (const table of manifest.tables) {
      const schema = Buffer.from(JSON.stringify(table.schema)).toString('base64');
      const written = await bed.site.php(
        `echo Sitewarden_Connector_Sql_Schema::create_table( base64_decode( '${Buffer.from(table.name).toString('base64')}' ), json_decode( base64_decode( '${schema}' ), true ) );`,
      );
      expect(written, table.name).toBe(emitCreateTable(table.name, table.schema!));
    }
  });

  it('names the table whose staged copy would pass the 64-character limit', async () => {
    const table = `wp_${'x'.repeat(61)}`;
    const begun = await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/begin');
    const restore = begun.json.restoreId as string;
    try {
      const schema = {
        columns: [{ name: 'id', type: { name: 'int' }, nullable: false }],
        indexes: [],
        foreignKeys: [],
        options: [],
      };
      const created = await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/table', {
        json: { restore, table, schema },
      });
      expect(created.status, created.text).toBe(422);
      expect(created.json).toMatchObject({
        code: 'sitewarden_table_name_too_long',
        message: expect.stringContaining(table),
      });
    } finally {
      await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/abort', { json: { restore } });
    }
  });

  it('runs one INSERT of literal rows only, and no statement smuggled into a schema', async () => {
    const begun = await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/begin');
    const restore = begun.json.restoreId as string;
    const table = ODD[1]!;
    try {
      const comment = "x'); DROP TABLE wp_posts; -- ";
      const schema = {
        columns: [{ name: 'id', type: { name: 'int' }, nullable: false, comment }],
        indexes: [],
        foreignKeys: [],
        options: [['AUTO_INCREMENT', '1; DROP TABLE wp_posts']],
      };
      expect(
        (await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/table', { json: { restore, table, schema } }))
          .json.code,
      ).toBe('rest_invalid_param');
      schema.options = [];
      const created = await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/table', {
        json: { restore, table, schema },
      });
      expect(created.status, created.text).toBe(200);
      const header = `INSERT INTO ${quoteIdentifier(table)} (${quoteIdentifier('id')}) VALUES\n`;
      for (const sql of [`${header}(1);\nDROP TABLE wp_posts;\n`, `${header}((SELECT 1));\n`, `${header}('1');\n`]) {
        const refused = await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/rows', {
          json: { restore, table, sql },
        });
        expect(refused.status, sql).toBe(400);
      }
      const inserted = await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/rows', {
        json: { restore, table, sql: `${header}(1),\n(2);\n` },
      });
      expect(inserted.json).toEqual({ table, rows: 2 });
      // The comment stayed a comment of the staged table.
      const staged = await bed.site.php(
        `global $wpdb; echo $wpdb->get_var( "SELECT COLUMN_COMMENT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'wp_swr_with space'" );`,
      );
      expect(staged).toBe(comment);
    } finally {
      await connectorCall(bed.site, bed.site.admin, 'POST', 'restore/abort', { json: { restore } });
    }
    expect(
      await bed.site.php(
        `global $wpdb; echo (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->posts}" ) > 0 ? 'posts kept' : 'posts lost';`,
      ),
    ).toBe('posts kept');
  });
});

describe('a table the connector cannot read', () => {
  it('fails the backup naming it, instead of leaving it out', async () => {
    // A MERGE table over a table that is gone: listed by MariaDB, unreadable.
    await bed.site.php(
      `global $wpdb; ${[`CREATE TABLE wp_merge_part (id INT) ENGINE=MyISAM`, `CREATE TABLE wp_merged (id INT) ENGINE=MRG_MyISAM UNION=(wp_merge_part)`, `DROP TABLE wp_merge_part`].map(php).join('\n')}`,
    );
    try {
      const backup = await backUp();
      expect(backup, JSON.stringify(backup)).toMatchObject({
        status: 'failed',
        reason: 'backup-table-unreadable',
        manifest: null,
      });
      expect(backup.error).toContain('"wp_merged"');
    } finally {
      await bed.site.php(`global $wpdb; ${php('DROP TABLE IF EXISTS wp_merged')}`);
    }
  });
});

describe('a dump imported with the mariadb command-line client', () => {
  it('runs no client command hidden in a table name, column name or comment, and creates every table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-client-'));
    const marker = join(dir, 'pwned');
    const database = `sw_client_${randomBytes(4).toString('hex')}`;
    // Each name ends a line inside a quoted name or string, then offers the client's shell escape.
    const command = `\n\\! touch ${marker}\n`;
    const names = [`wp_a${command}x`, `wp_b\\\`${command}x`, 'wp_c\\', 'wp_d\\\\'];
    const column = `c\\${command}x`;
    const batches = new Map<string, Buffer>();
    const tables = names.map((name) => {
      const content = Buffer.from(`${batchHeader(name, [column])}(1),\n(NULL);\n`);
      const hash = createHash('sha256').update(content).digest('hex');
      batches.set(hash, content);
      return {
        name,
        schema: {
          columns: [{ name: column, type: { name: 'int' as const }, nullable: true, comment: `x\\'${command}` }],
          indexes: [],
          foreignKeys: [],
          options: [],
        },
        rows: 2,
        primaryKey: [],
        checksum: null,
        batches: [hash],
      };
    });
    let dump = '';
    const store = { read: async (hash: string) => batches.get(hash)! } as unknown as ObjectStore;
    await writeSqlDump({
      manifest: {
        format: 1,
        siteUrl: `http://x.test/${command}`,
        createdAt: new Date().toISOString(),
        files: [],
        tables,
      },
      store,
      write: async (chunk) => void (dump += chunk.toString()),
    });
    try {
      mariadb(['-e', `CREATE DATABASE ${database}`]);
      mariadb([database], Buffer.from(dump));
      expect(existsSync(marker)).toBe(false);
      for (const name of names)
        expect(
          mariadb([database, '-N', '--raw', '-e', `SELECT COUNT(*) FROM ${quoteIdentifier(name)}`]).trim(),
          name,
        ).toBe('2');
    } finally {
      mariadb(['-e', `DROP DATABASE IF EXISTS ${database}`]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
