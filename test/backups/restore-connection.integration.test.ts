import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestUser } from '../support/wordpress/index.js';
import { readManifest } from '../../src/backups/manifest.js';
import { parseCreateTable } from '../../src/backups/sql-schema-parser.js';
import { connectorCall as callConnector, databaseSnapshot, useBackupSite } from '../support/backup-site.js';
import { installFixturePlugin, wordpressPlugins } from '../support/wordpress-state.js';
import { CONNECTOR_VERSION } from '../support/connector-version.js';

/**
 * What a restore must not break: the connector's version gate, the daemon's own login (even when
 * the backup never had that user), the database matching the backup exactly, and a finish that
 * an interruption cannot leave half done.
 */
const bed = useBackupSite({}, { lean: true });
const api = (path = '') => `/api/sites/${bed.siteId}${path}`;

async function backUp() {
  const queued = await bed.t.call('POST', api('/backups'));
  expect(queued.status, queued.text).toBe(202);
  await bed.t.services.backups.idle();
  return (await bed.t.call('GET', api(`/backups/${queued.json.id}`))).json;
}

/** A connector route called directly, as the daemon calls it. */
const connectorCall = (
  user: TestUser,
  method: 'GET' | 'POST',
  route: string,
  init?: Parameters<typeof callConnector>[4],
) => callConnector(bed.site, user, method, route, init);

const tableNames = async (like: string) =>
  JSON.parse(
    await bed.site.php(
      `global $wpdb; echo wp_json_encode( $wpdb->get_col( $wpdb->prepare( 'SHOW TABLES LIKE %s', ${JSON.stringify(like)} ) ) );`,
    ),
  ) as string[];
const stagingDirs = () =>
  readdirSync(join(bed.site.root, 'wp-content')).filter(
    (name) => name.startsWith('sitewarden-restore-') && !name.endsWith('.done'),
  );

describe('the connector version gate', () => {
  it('refuses backups to a connector older than 1.2.0 (whose backups could leave tables out), naming the feature, both versions and the update, while plugin updates still work', async () => {
    const main = join(bed.site.root, 'wp-content/plugins/sitewarden-connector/sitewarden-connector.php');
    const current = readFileSync(main, 'utf8');
    writeFileSync(
      main,
      current.replace(
        /define\(\s*'SITEWARDEN_CONNECTOR_VERSION',\s*'[^']+'\s*\)/,
        "define( 'SITEWARDEN_CONNECTOR_VERSION', '1.1.0' )",
      ),
    );
    try {
      const refused = await backUp();
      expect(refused, JSON.stringify(refused)).toMatchObject({
        status: 'failed',
        reason: 'connector-outdated',
        manifest: null,
      });
      expect(refused.error).toContain('backups needs Sitewarden connector 1.2.0 or newer and the site has 1.1.0');
      expect(refused.error).toContain('/api/connector.zip');

      installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
      await bed.site.php(
        "require_once ABSPATH . 'wp-admin/includes/plugin.php'; activate_plugin( 'sitewarden-demo/sitewarden-demo.php' ); delete_site_transient( 'update_plugins' );",
      );
      await bed.t.services.sync.syncNow(bed.siteId);
      const updated = await bed.t.call('POST', api('/plugins/sitewarden-demo/update'));
      expect(updated.status, updated.text).toBe(200);
      expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.1.0');
    } finally {
      writeFileSync(main, current);
    }
    const info = await connectorCall(bed.site.admin, 'GET', 'info');
    expect(info.json).toMatchObject({
      connector: CONNECTOR_VERSION,
      features: expect.arrayContaining(['plugins/update', 'backups', 'restore']),
    });
  });
});

describe('a restore keeps the site connected and its database exactly the backup’s', () => {
  it('keeps the restoring administrator the backup never had, drops prefixed tables created since, and leaves other tables alone', async () => {
    const backup = await backUp();
    expect(backup.status, JSON.stringify(backup)).toBe('completed');
    const before = await databaseSnapshot(bed.site);
    const siteurl = await bed.site.option('siteurl');

    // Created after the backup: an administrator, whose application password Sitewarden then uses.
    const second = await bed.site.createUser('administrator');
    await bed.t.services.sitesRepository.update(bed.siteId, {
      username: second.username,
      credentialSealed: bed.t.services.secrets.seal(second.applicationPassword),
    });
    expect((await bed.t.call('GET', api('/plugins'))).status).toBe(200);
    await bed.site.php(`global $wpdb;
      $wpdb->query( "CREATE TABLE {$wpdb->prefix}sitewarden_since ( id INT PRIMARY KEY )" );
      $wpdb->query( "CREATE TABLE sitewarden_unprefixed ( id INT PRIMARY KEY )" );
      $wpdb->query( "INSERT INTO sitewarden_unprefixed VALUES ( 7 )" );
      update_option( 'blogname', 'Renamed after the backup' );`);

    try {
      const started = await bed.t.call('POST', api(`/backups/${backup.id}/restore`));
      expect(started.status, started.text).toBe(202);
      await bed.t.services.backups.idle();
      const restore = (await bed.t.call('GET', api(`/restores/${started.json.id}`))).json;
      expect(restore, JSON.stringify(restore)).toMatchObject({ status: 'completed', reason: null });

      // WordPress's own view: the user is there, still an administrator, with its application password.
      const user = JSON.parse(
        await bed.site.php(`$user = get_user_by( 'login', ${JSON.stringify(second.username)} );
          echo wp_json_encode( array( 'exists' => (bool) $user, 'admin' => $user && user_can( $user, 'manage_options' ), 'passwords' => $user ? count( WP_Application_Passwords::get_user_application_passwords( $user->ID ) ) : 0 ) );`),
      ) as { exists: boolean; admin: boolean; passwords: number };
      expect(user).toEqual({ exists: true, admin: true, passwords: 1 });
      expect(await bed.site.option('siteurl')).toBe(siteurl);
      expect(await bed.site.option('blogname')).not.toBe('Renamed after the backup');
      expect(await bed.site.option('active_plugins')).toContain('sitewarden-connector/sitewarden-connector.php');

      // Authenticated calls as that user still work: the daemon's, and the connector's directly.
      const plugins = await bed.t.call('GET', api('/plugins'));
      expect(plugins.status, plugins.text).toBe(200);
      await bed.t.services.sync.syncNow(bed.siteId);
      expect((await bed.t.call('GET', api())).json.versions.connector).toBe(CONNECTOR_VERSION);
      expect((await connectorCall(second, 'GET', 'info')).json).toMatchObject({
        capabilities: { install_plugins: true },
      });

      expect(await tableNames('%sitewarden_since')).toEqual([]);
      expect(await bed.site.php(`global $wpdb; echo $wpdb->get_var( 'SELECT id FROM sitewarden_unprefixed' );`)).toBe(
        '7',
      );
      // Every other row is the backup's; users and usermeta differ only by the kept administrator.
      const after = await databaseSnapshot(bed.site);
      const withoutUsers = (snapshot: typeof after) =>
        Object.fromEntries(Object.entries(snapshot).filter(([name]) => name !== 'wp_users' && name !== 'wp_usermeta'));
      expect(withoutUsers(after)).toEqual(withoutUsers(before));
      expect(after['wp_users']!.rows).toBe(before['wp_users']!.rows + 1);
    } finally {
      await bed.site.php(`global $wpdb; $wpdb->query( 'DROP TABLE IF EXISTS sitewarden_unprefixed' );`);
      await bed.t.services.sitesRepository.update(bed.siteId, {
        username: bed.site.admin.username,
        credentialSealed: bed.t.services.secrets.seal(bed.site.admin.applicationPassword),
      });
    }
  });
});

describe('tables written to while a backup reads them', () => {
  it('are read again at the end, so the backup holds them as they were after the change', async () => {
    await bed.site.php(`global $wpdb;
      $wpdb->query( "CREATE TABLE {$wpdb->prefix}aaa_counter ( id INT PRIMARY KEY )" );
      $wpdb->query( "INSERT INTO {$wpdb->prefix}aaa_counter VALUES ( 1 )" );
      $wpdb->query( "CREATE TABLE {$wpdb->prefix}zzz_trigger ( id INT PRIMARY KEY )" );
      $wpdb->query( "INSERT INTO {$wpdb->prefix}zzz_trigger VALUES ( 1 )" );`);
    // A visitor's write lands after the backup read wp_aaa_counter (tables are read in name order).
    const muPlugin = join(bed.site.root, 'wp-content/mu-plugins/sitewarden-write-during-backup.php');
    mkdirSync(join(bed.site.root, 'wp-content/mu-plugins'), { recursive: true });
    writeFileSync(
      muPlugin,
      `<?php
add_filter( 'rest_pre_dispatch', function ( $result, $server, $request ) {
  global $wpdb;
  if ( '/sitewarden/v1/backup/rows' === $request->get_route() && $wpdb->prefix . 'zzz_trigger' === $request['table'] ) {
    $wpdb->query( "INSERT IGNORE INTO {$wpdb->prefix}aaa_counter VALUES ( 2 )" );
  }
  return $result;
}, 10, 3 );`,
    );
    try {
      const backup = await backUp();
      expect(backup.status, JSON.stringify(backup)).toBe('completed');
      const manifest = await readManifest(bed.t.services.backups.store, backup.manifest);
      const counter = manifest.tables.find((table) => table.name === 'wp_aaa_counter')!;
      expect(counter.rows).toBe(2);
      const sql = (await Promise.all(counter.batches.map((hash) => bed.t.services.backups.store.read(hash)))).join('');
      expect(sql).toMatch(/\(2\)/);
    } finally {
      rmSync(muPlugin);
      await bed.site.php(
        `global $wpdb; $wpdb->query( "DROP TABLE {$wpdb->prefix}aaa_counter, {$wpdb->prefix}zzz_trigger" );`,
      );
    }
  });
});

describe('a restore’s finish interrupted midway', () => {
  const muPlugin = () => join(bed.site.root, 'wp-content/mu-plugins/sitewarden-interrupt-restore.php');
  /** Ends the PHP request at a finishing step, as a killed PHP worker or a host's time limit would. */
  const interruptAt = (step: 'swap' | 'files') => {
    mkdirSync(join(bed.site.root, 'wp-content/mu-plugins'), { recursive: true });
    writeFileSync(
      muPlugin(),
      `<?php\nadd_action( 'sitewarden_connector_restore_step', function ( $step ) { if ( ${JSON.stringify(step)} === $step ) { exit; } } );\n`,
    );
  };
  const admin = () => bed.site.admin;

  async function stageRestore(): Promise<string> {
    await bed.site.php(`global $wpdb;
      $wpdb->query( "DROP TABLE IF EXISTS {$wpdb->prefix}sitewarden_journal" );
      $wpdb->query( "CREATE TABLE {$wpdb->prefix}sitewarden_journal ( id INT PRIMARY KEY, v VARCHAR(10) )" );
      $wpdb->query( "INSERT INTO {$wpdb->prefix}sitewarden_journal VALUES ( 1, 'old' )" );`);
    const begun = await connectorCall(admin(), 'POST', 'restore/begin');
    expect(begun.status, begun.text).toBe(200);
    const restore = begun.json.restoreId as string;
    const create = await bed.site.php(
      `global $wpdb; echo $wpdb->get_row( "SHOW CREATE TABLE {$wpdb->prefix}sitewarden_journal", ARRAY_N )[1];`,
    );
    const schema = parseCreateTable(create, 'wp_sitewarden_journal');
    expect(
      (
        await connectorCall(admin(), 'POST', 'restore/table', {
          json: { restore, table: 'wp_sitewarden_journal', schema },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await connectorCall(admin(), 'POST', 'restore/rows', {
          json: {
            restore,
            table: 'wp_sitewarden_journal',
            sql: "INSERT INTO `wp_sitewarden_journal` (`id`,`v`) VALUES\n(1,X'6e6577');\n",
          },
        })
      ).status,
    ).toBe(200);
    for (const name of ['journal-a.txt', 'journal-b.txt']) {
      const written = await connectorCall(admin(), 'POST', 'restore/file', {
        query: { restore, path: `wp-content/uploads/${name}`, offset: '0' },
        body: Buffer.from(name),
      });
      expect(written.status, written.text).toBe(200);
    }
    return restore;
  }
  const journalValue = () =>
    bed.site.php(`global $wpdb; echo $wpdb->get_var( "SELECT v FROM {$wpdb->prefix}sitewarden_journal" );`);
  const uploaded = (name: string) => join(bed.site.root, 'wp-content/uploads', name);
  const tables = async () =>
    (await bed.site.php(`global $wpdb; echo implode( ',', $wpdb->get_col( "SHOW TABLES" ) );`)).split(',');

  it('completes a finish cut off after the table swap when finish is called again, and answers the same to a third call', async () => {
    const restore = await stageRestore();
    interruptAt('files');
    try {
      const cut = await connectorCall(admin(), 'POST', 'restore/finish', { json: { restore, tables: await tables() } });
      expect(cut.json).toBeUndefined();
    } finally {
      rmSync(muPlugin());
    }
    // The tables are the restored ones, all at once; the files wait in staging with the journal.
    expect(await journalValue()).toBe('new');
    expect(existsSync(uploaded('journal-a.txt'))).toBe(false);
    expect(
      JSON.parse(
        readFileSync(join(bed.site.root, 'wp-content', `sitewarden-restore-${restore}`, 'journal.json'), 'utf8'),
      ),
    ).toMatchObject({ step: 'files' });
    // Nothing more may be staged into a finishing restore.
    expect(
      (
        await connectorCall(admin(), 'POST', 'restore/file', {
          query: { restore, path: 'wp-content/uploads/late.txt', offset: '0' },
          body: Buffer.from('late'),
        })
      ).status,
    ).toBe(409);

    const again = await connectorCall(admin(), 'POST', 'restore/finish', { json: { restore, tables: [] } });
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ tables: 1, moved: 2 });
    expect(readFileSync(uploaded('journal-a.txt'), 'utf8')).toBe('journal-a.txt');
    expect(readFileSync(uploaded('journal-b.txt'), 'utf8')).toBe('journal-b.txt');
    expect([...(await tableNames('wp\\_swr\\_%')), ...(await tableNames('wp\\_swo\\_%'))]).toEqual([]);
    expect(stagingDirs()).toEqual([]);
    // The answer was lost? Asking again gives it again rather than "no such restore".
    const third = await connectorCall(admin(), 'POST', 'restore/finish', { json: { restore, tables: [] } });
    expect(third.json).toEqual(again.json);
    rmSync(uploaded('journal-a.txt'));
    rmSync(uploaded('journal-b.txt'));
  });

  it('leaves the live tables untouched when cut off before the swap, and the next abort (or begin) discards it', async () => {
    const restore = await stageRestore();
    interruptAt('swap');
    try {
      const cut = await connectorCall(admin(), 'POST', 'restore/finish', { json: { restore, tables: await tables() } });
      expect(cut.json).toBeUndefined();
    } finally {
      rmSync(muPlugin());
    }
    expect(await journalValue()).toBe('old');
    expect(existsSync(uploaded('journal-a.txt'))).toBe(false);

    const aborted = await connectorCall(admin(), 'POST', 'restore/abort', { json: { restore } });
    expect(aborted.json).toEqual({ aborted: true });
    expect(await journalValue()).toBe('old');
    expect(await tableNames('wp\\_swr\\_%')).toEqual([]);
    expect(stagingDirs()).toEqual([]);

    // Left behind after the swap, a restore is completed by the next begin rather than discarded.
    const next = await stageRestore();
    interruptAt('files');
    try {
      await connectorCall(admin(), 'POST', 'restore/finish', { json: { restore: next, tables: await tables() } });
    } finally {
      rmSync(muPlugin());
    }
    const begun = await connectorCall(admin(), 'POST', 'restore/begin');
    expect(begun.status, begun.text).toBe(200);
    expect(await journalValue()).toBe('new');
    expect(existsSync(uploaded('journal-a.txt'))).toBe(true);
    expect(stagingDirs()).toEqual([`sitewarden-restore-${begun.json.restoreId}`]);
    await connectorCall(admin(), 'POST', 'restore/abort', { json: { restore: begun.json.restoreId } });
    expect(stagingDirs()).toEqual([]);
    rmSync(uploaded('journal-a.txt'));
    rmSync(uploaded('journal-b.txt'));
    await bed.site.php(`global $wpdb; $wpdb->query( "DROP TABLE {$wpdb->prefix}sitewarden_journal" );`);
  });
});
