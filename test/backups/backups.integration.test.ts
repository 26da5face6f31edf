import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { backups as backupsTable, restores as restoresTable } from '../../src/backups/backups.table.js';
import type { Manifest } from '../../src/backups/manifest.js';
import {
  connectorCall as callConnector,
  databaseSnapshot,
  filesSnapshot,
  useBackupSite,
  verifyJob,
} from '../support/backup-site.js';
import { insertJobRowOf } from '../support/job-rows.js';

/**
 * Backups and restores of a real WordPress site through the connector: what comes back is
 * exactly what was backed up, rows compared in SQL and files by hash.
 */
const bed = useBackupSite({}, { lean: true });
const api = (path = '') => `/api/sites/${bed.siteId}${path}`;

async function backUp() {
  const queued = await bed.t.call('POST', api('/backups'));
  expect(queued.status, queued.text).toBe(202);
  expect(queued.json.status).toBe('queued');
  await bed.t.services.backups.idle();
  return (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json;
}

const BIG = 'wp-content/uploads/2026/01/video.bin';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
const state: { first?: any; snapshotDb?: Record<string, unknown>; snapshotFiles?: Record<string, string> } = {};

describe('backups of a real site', () => {
  it('backs up files and tables, binary columns included, and the backup verifies', async () => {
    await bed.site.php(`
      for ( $i = 1; $i <= 5; $i++ ) wp_insert_post( array( 'post_title' => "Post $i é", 'post_content' => str_repeat( "Content $i ", 50 ), 'post_status' => 'publish' ) );
      $upload = wp_upload_bits( 'photo.jpg', null, random_bytes( 200000 ) );
      if ( $upload['error'] ) { fwrite( STDERR, $upload['error'] ); exit( 1 ); }
      update_option( 'sitewarden_demo_settings', array( 'color' => 'blue', 'count' => 3 ) );
      global $wpdb;
      $wpdb->query( "CREATE TABLE {$wpdb->prefix}sitewarden_blobs ( id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, data LONGBLOB, note VARCHAR(50) NULL, amount DECIMAL(10,2) NULL ) ENGINE=InnoDB" );
      $all = ''; for ( $b = 0; $b < 256; $b++ ) $all .= chr( $b );
      $wpdb->query( "INSERT INTO {$wpdb->prefix}sitewarden_blobs ( data, note, amount ) VALUES ( 0x" . bin2hex( $all ) . ", NULL, 12.50 ), ( '', 'empty', -3.25 )" );
      $wpdb->query( "CREATE TABLE {$wpdb->prefix}sitewarden_log ( message TEXT ) ENGINE=InnoDB" );
      $wpdb->query( "INSERT INTO {$wpdb->prefix}sitewarden_log VALUES ('one'), ('two'), ('two')" );
    `);
    mkdirSync(join(bed.site.root, 'wp-content/uploads/2026/01'), { recursive: true });
    writeFileSync(join(bed.site.root, BIG), randomBytes(9 * 1024 * 1024 + 1234));
    state.snapshotDb = await databaseSnapshot(bed.site);
    state.snapshotFiles = filesSnapshot(bed.site);

    const backup = await backUp();
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'completed', kind: 'manual', reason: null });
    expect(backup.progress.files).toBe(Object.keys(state.snapshotFiles).length);
    expect(backup.progress.filesDone).toBe(backup.progress.files);
    expect(backup.progress.tables).toBeGreaterThanOrEqual(14);
    // Everything travels once; files with the same content (core's many index.php) only once in all.
    expect(backup.bytes.transferred).toBeGreaterThan(backup.bytes.total * 0.9);
    expect(backup.bytes.stored).toBeGreaterThan(9 * 1024 * 1024);
    expect(backup.manifest).toMatch(/^[0-9a-f]{64}$/);
    state.first = backup;

    const verified = await verifyJob(bed.t, api(`/backups/${backup.id}/verify`));
    expect(verified.json).toMatchObject({ ok: true, problems: [] });
    expect(verified.json.objectsChecked).toBeGreaterThan(100);

    const list = await bed.t.call('GET', api('/backups'), { token: bed.t.readToken });
    expect(list.json.items.map((item: { id: string }) => item.id)).toEqual([backup.id]);
    expect(bed.t.logs.events('backup.completed')).toContainEqual(
      expect.objectContaining({ backupId: backup.id, siteId: bed.siteId }),
    );
  });

  it('downloads as a standard tar.gz of the files plus an SQL dump any MariaDB imports', async () => {
    const response = await bed.t.app.request(api(`/backups/${state.first.id}/download`), {
      headers: { authorization: `Bearer ${bed.t.writeToken}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toMatch(
      /attachment; filename="127\.0\.0\.1-\d+-bkp_\w+\.tar\.gz"/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'sitewarden-download-'));
    const database = `sw_download_${randomBytes(4).toString('hex')}`;
    const mariadb = (args: string[], input?: Buffer) =>
      execFileSync('mariadb', ['--no-defaults', `--socket=${inject('mariadbSocket')}`, '-uroot', ...args], {
        input,
        encoding: 'utf8',
      });
    try {
      writeFileSync(join(dir, 'backup.tar.gz'), Buffer.from(await response.arrayBuffer()));
      execFileSync('tar', ['xzf', 'backup.tar.gz'], { cwd: dir });
      const extracted = filesSnapshot({ ...bed.site, root: join(dir, 'files') });
      expect(extracted).toEqual(state.snapshotFiles);

      mariadb(['-e', `CREATE DATABASE ${database}`]);
      mariadb([database], readFileSync(join(dir, 'database.sql')));
      expect(
        mariadb([database, '-N', '-e', 'SELECT HEX(data), note IS NULL, amount FROM wp_sitewarden_blobs ORDER BY id'])
          .trim()
          .split('\n'),
      ).toEqual([
        `${Buffer.from(Array.from({ length: 256 }, (_, i) => i))
          .toString('hex')
          .toUpperCase()}\t1\t12.50`,
        '\t0\t-3.25',
      ]);
      const posts = await bed.site.php(`global $wpdb; echo $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->posts}" );`);
      expect(mariadb([database, '-N', '-e', 'SELECT COUNT(*) FROM wp_posts']).trim()).toBe(posts);
      expect(
        mariadb([
          database,
          '-N',
          '-e',
          "SELECT option_value FROM wp_options WHERE option_name = 'sitewarden_demo_settings'",
        ]),
      ).toContain('blue');
    } finally {
      mariadb(['-e', `DROP DATABASE IF EXISTS ${database}`]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('transfers and stores almost nothing when backing up an unchanged site again', async () => {
    const second = await backUp();
    expect(second.status).toBe('completed');
    expect(second.bytes.total).toBe(state.first.bytes.total);
    // Only tables whose checksum moved (application password use is recorded in usermeta) travel again.
    expect(second.bytes.transferred).toBeLessThan(state.first.bytes.transferred * 0.01);
    expect(second.bytes.stored).toBeLessThan(state.first.bytes.stored * 0.01);
  });

  it('answers 409 backup-in-progress while a backup of the site is queued or running', async () => {
    const first = await bed.t.call('POST', api('/backups'));
    const second = await bed.t.call('POST', api('/backups'));
    expect(first.status).toBe(202);
    expect(second.status).toBe(409);
    expect(second.json.type).toBe('/problems/backup-in-progress');
    await bed.t.services.backups.idle();
  });

  it('restores exactly the backed-up files and rows, and the site stays connected', async () => {
    const siteurl = await bed.site.option('siteurl');
    await bed.site.php(`
      global $wpdb;
      $posts = get_posts( array( 'numberposts' => 2 ) );
      wp_update_post( array( 'ID' => $posts[0]->ID, 'post_title' => 'Changed' ) );
      wp_delete_post( $posts[1]->ID, true );
      update_option( 'sitewarden_demo_settings', array( 'color' => 'red' ) );
      $wpdb->query( "UPDATE {$wpdb->prefix}sitewarden_blobs SET data = 0x00 WHERE id = 1" );
      $wpdb->query( "DROP TABLE {$wpdb->prefix}sitewarden_log" );
      $wpdb->query( "CREATE TABLE {$wpdb->prefix}sitewarden_later ( id INT PRIMARY KEY )" );
    `);
    const photo = Object.keys(state.snapshotFiles!).find((path) => path.endsWith('photo.jpg'))!;
    rmSync(join(bed.site.root, photo));
    const big = readFileSync(join(bed.site.root, BIG));
    big[5_000_000] = big[5_000_000]! ^ 0xff;
    writeFileSync(join(bed.site.root, BIG), big);
    writeFileSync(join(bed.site.root, 'wp-content/uploads/added-later.txt'), 'not in the backup');
    expect(filesSnapshot(bed.site)).not.toEqual(state.snapshotFiles);

    const started = await bed.t.call('POST', api(`/backups/${state.first.id}/restore`));
    expect(started.status, started.text).toBe(202);
    expect(started.json).toMatchObject({ status: 'queued', backupId: state.first.id });
    await bed.t.services.backups.idle();
    const restore = (await bed.t.call('GET', api(`/restores/${started.json.id}`))).json;
    expect(restore, JSON.stringify(restore)).toMatchObject({ status: 'completed', reason: null });
    expect(restore.filesRestored).toBe(2);
    expect(restore.filesDeleted).toBe(1);

    expect(filesSnapshot(bed.site)).toEqual(state.snapshotFiles);
    // Tables the backup did not have (wp_sitewarden_later) are dropped: the database is the backup's exactly.
    expect(await databaseSnapshot(bed.site)).toEqual(state.snapshotDb);
    const blob = await bed.site.php(
      `global $wpdb; echo bin2hex( $wpdb->get_var( "SELECT data FROM {$wpdb->prefix}sitewarden_blobs WHERE id = 1" ) );`,
    );
    expect(blob).toBe(Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('hex'));

    // The connection survives: same address, connector active, the daemon's credential still works.
    expect(await bed.site.option('siteurl')).toBe(siteurl);
    expect(await bed.site.option('active_plugins')).toContain('sitewarden-connector/sitewarden-connector.php');
    expect((await bed.t.call('GET', `/api/sites/${bed.siteId}/plugins`)).status).toBe(200);

    const pre = (await bed.t.call('GET', api(`/backups/${restore.preRestoreBackupId}`))).json;
    expect(pre).toMatchObject({ kind: 'pre_restore', status: 'completed' });
    expect(bed.t.logs.events('restore.completed')).toContainEqual(
      expect.objectContaining({ restoreId: restore.id, preRestoreBackupId: pre.id }),
    );
  });

  it('fails a backup whose connector step fails, with a reason, and leaves earlier backups intact', async () => {
    const muPlugin = join(bed.site.root, 'wp-content/mu-plugins/sitewarden-break-rows.php');
    writeFileSync(
      muPlugin,
      `<?php
add_filter( 'rest_pre_dispatch', function ( $result, $server, $request ) {
  return '/sitewarden/v1/backup/rows' === $request->get_route() ? new WP_Error( 'sitewarden_query_failed', 'Table is marked as crashed', array( 'status' => 500 ) ) : $result;
}, 10, 3 );`,
    );
    try {
      const failed = await backUp();
      expect(failed).toMatchObject({ status: 'failed', reason: 'site-error', manifest: null });
      expect(failed.error).toContain('Table is marked as crashed');
      expect(bed.t.logs.events('backup.failed')).toContainEqual(
        expect.objectContaining({ backupId: failed.id, reason: 'site-error' }),
      );
    } finally {
      rmSync(muPlugin);
    }
    const verified = await verifyJob(bed.t, api(`/backups/${state.first.id}/verify`));
    expect(verified.json.ok).toBe(true);
  });

  it('never leaves a backup completed when the daemon was killed while it ran', async () => {
    const { db } = bed.t.database;
    // As a daemon killed mid-job left them: the backup's and restore's rows and their job rows, `running`.
    insertJobRowOf(
      db,
      'backup',
      db
        .insert(backupsTable)
        .values({
          id: 'bkp_00000000000000000000000001',
          siteId: bed.siteId,
          kind: 'manual',
          status: 'running',
          createdAt: new Date(),
          startedAt: new Date(),
        })
        .returning()
        .get(),
    );
    const tmp = join(bed.dataDir, 'backups/tmp');
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, 'half-written.tmp'), 'partial');

    insertJobRowOf(
      db,
      'restore',
      db
        .insert(restoresTable)
        .values({
          id: 'rst_00000000000000000000000001',
          siteId: bed.siteId,
          backupId: state.first.id,
          status: 'running',
          createdAt: new Date(),
          startedAt: new Date(),
        })
        .returning()
        .get(),
    );

    await bed.t.services.backups.recoverInterrupted();
    expect((await bed.t.call('GET', api('/restores/rst_00000000000000000000000001'))).json).toMatchObject({
      status: 'failed',
      reason: 'interrupted',
    });
    expect(bed.t.logs.events('restore.failed')).toContainEqual(
      expect.objectContaining({ restoreId: 'rst_00000000000000000000000001', reason: 'interrupted' }),
    );
    const after = (await bed.t.call('GET', api('/backups/bkp_00000000000000000000000001'))).json;
    expect(after).toMatchObject({ status: 'failed', reason: 'interrupted' });
    expect(existsSync(join(tmp, 'half-written.tmp'))).toBe(false);
    expect(bed.t.logs.events('backup.failed')).toContainEqual(
      expect.objectContaining({ backupId: after.id, reason: 'interrupted' }),
    );
    expect((await verifyJob(bed.t, api(`/backups/${after.id}/verify`))).json.ok).toBe(false);
    expect((await bed.t.call('POST', api(`/backups/${after.id}/restore`))).json.type).toBe(
      '/problems/backup-not-completed',
    );
  });
});

/** The connector's routes called directly, as the daemon calls them. */
const connectorCall = (method: 'GET' | 'POST', route: string, init?: Parameters<typeof callConnector>[4]) =>
  callConnector(bed.site, bed.site.admin, method, route, init);

describe('paths escaping the WordPress root (zip-slip)', () => {
  const unsafe = [
    '../evil.php',
    '/tmp/evil.php',
    'wp-content/../../evil.php',
    'wp-content/uploads/../../../evil.php',
    'a\\..\\evil.php',
  ];

  it('are refused by the connector when reading files for a backup', async () => {
    for (const path of unsafe) {
      const single = await connectorCall('GET', 'backup/file', { query: { path } });
      expect(single.status, path).toBe(400);
      expect(single.json.code, path).toBe('sitewarden_unsafe_path');
    }
    const bundle = await connectorCall('POST', 'backup/bundle', {
      json: { paths: ['index.php', '../../../../etc/passwd'] },
    });
    expect(bundle.status).toBe(400);
    expect(bundle.json.code).toBe('sitewarden_unsafe_path');
  });

  it('are refused by the connector when writing or deleting files in a restore, symlinks included', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'sitewarden-outside-'));
    symlinkSync(outside, join(bed.site.root, 'wp-content/uploads/escape'));
    const begun = await connectorCall('POST', 'restore/begin');
    expect(begun.status, begun.text).toBe(200);
    const restore = begun.json.restoreId as string;
    try {
      for (const path of [...unsafe, 'wp-content/uploads/escape/evil.php']) {
        const written = await connectorCall('POST', 'restore/file', {
          query: { restore, path, offset: '0' },
          body: Buffer.from('<?php evil();'),
        });
        expect(written.status, path).toBe(400);
        expect(written.json.code, path).toBe('sitewarden_unsafe_path');
      }
      const deletion = await connectorCall('POST', 'restore/delete', {
        json: { restore, paths: ['../wp-config.php'] },
      });
      expect(deletion.json.code).toBe('sitewarden_unsafe_path');
      // wp-config.php and the connector itself are never replaced: quietly skipped, not staged.
      const config = await connectorCall('POST', 'restore/file', {
        query: { restore, path: 'wp-config.php', offset: '0' },
        body: Buffer.from('<?php'),
      });
      expect(config.json).toMatchObject({ skipped: true });
      // Tables travel as data: SQL smuggled into a type or an engine is refused before anything runs.
      const schema = {
        columns: [{ name: 'id', type: { name: 'int); DROP TABLE wp_posts; --' }, nullable: false }],
        indexes: [],
        foreignKeys: [],
        engine: 'InnoDB DATA DIRECTORY=/tmp',
        options: [],
      };
      const table = await connectorCall('POST', 'restore/table', { json: { restore, table: 'wp_users', schema } });
      expect(table.status).toBe(400);
      expect(table.json.code).toBe('rest_invalid_param');
      const rows = await connectorCall('POST', 'restore/rows', {
        json: { restore, table: 'wp_users', sql: 'DELETE FROM wp_users' },
      });
      expect(rows.status).toBe(400);
    } finally {
      await connectorCall('POST', 'restore/abort', { json: { restore } });
      rmSync(join(bed.site.root, 'wp-content/uploads/escape'));
    }
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(dirname(bed.site.root), 'evil.php'))).toBe(false);
    expect(
      readdirSync(join(bed.site.root, 'wp-content')).filter((name) => name.startsWith('sitewarden-restore-')),
    ).toEqual([]);
    expect(
      await bed.site.php(
        `global $wpdb; echo (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->posts}" ) > 0 ? 'posts kept' : 'posts lost';`,
      ),
    ).toBe('posts kept');
  });

  it('are refused by the daemon before anything is sent to the site', async () => {
    const store = bed.t.services.backups.store;
    const content = Buffer.from('<?php evil();');
    const { hash } = await store.put(content);
    const manifest: Manifest = {
      format: 1,
      siteUrl: bed.site.url,
      createdAt: new Date().toISOString(),
      tables: [],
      files: [{ path: '../../evil.php', size: content.length, mtime: 0, sha256: hash, chunks: [hash] }],
    };
    const manifestHash = (await store.put(Buffer.from(JSON.stringify(manifest)))).hash;
    const id = 'bkp_00000000000000000000000002';
    bed.t.database.db
      .insert(backupsTable)
      .values({
        id,
        siteId: bed.siteId,
        kind: 'manual',
        status: 'completed',
        manifestHash,
        createdAt: new Date(),
        finishedAt: new Date(),
      })
      .run();

    const started = await bed.t.call('POST', api(`/backups/${id}/restore`));
    expect(started.status).toBe(202);
    await bed.t.services.backups.idle();
    const restore = (await bed.t.call('GET', api(`/restores/${started.json.id}`))).json;
    expect(restore).toMatchObject({ status: 'failed', reason: 'backup-unsafe-path', filesRestored: 0 });
    expect(existsSync(join(dirname(dirname(bed.site.root)), 'evil.php'))).toBe(false);
    expect(bed.t.logs.events('restore.failed')).toContainEqual(
      expect.objectContaining({ restoreId: restore.id, reason: 'backup-unsafe-path' }),
    );
    bed.t.database.db.delete(backupsTable).run();
  });
});
