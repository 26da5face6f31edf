import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { ServiceConfig } from '../../src/services.js';
import { createTestSite, type TestSite } from './wordpress/index.js';
import { createTestApp, type TestApp } from './test-app.js';
import { trimBrowserAssets } from './lean-site.js';
import { connectSite, installConnector } from './wordpress-state.js';

/**
 * A connected site with the connector, and a test app with its own backup store. `lean`: core's
 * browser assets and the bundled themes but the default one removed first (lean-site.ts), for
 * tests that back up or restore the whole site where how many files it has is not the point.
 */
export function useBackupSite(
  config: Partial<ServiceConfig> = {},
  { lean = false }: { lean?: boolean } = {},
): {
  site: TestSite;
  t: TestApp;
  siteId: string;
  dataDir: string;
} {
  const context = {} as { site: TestSite; t: TestApp; siteId: string; dataDir: string };
  beforeAll(async () => {
    context.site = await createTestSite();
    if (lean) trimBrowserAssets(context.site);
    await installConnector(context.site);
    context.dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-backups-'));
    context.t = createTestApp({ config: { dataDir: context.dataDir, ...config } });
    context.siteId = await connectSite(context.t, context.site);
  });
  afterAll(async () => {
    await context.t?.services.backups.idle();
    await context.t?.close();
    await context.site?.stop();
    if (context.dataDir) rmSync(context.dataDir, { recursive: true, force: true });
  });
  return context;
}

/**
 * Every row of every table of the site, each value hex-encoded, as WordPress's database holds
 * them. Left out: what requests themselves change (transients, cron, application passwords' last
 * use) and the rewrite rules a restore flushes on purpose.
 */
export async function databaseSnapshot(site: TestSite): Promise<Record<string, { rows: number; hash: string }>> {
  return JSON.parse(
    await site.php(`
      global $wpdb;
      $out = array();
      foreach ( $wpdb->get_col( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $wpdb->prefix ) . '%' ) ) as $table ) {
        if ( 0 === strpos( $table, $wpdb->prefix . 'swr_' ) || 0 === strpos( $table, $wpdb->prefix . 'swo_' ) ) continue;
        $where = '';
        // rewrite_rules is a cache a restore flushes on purpose; WordPress rebuilds it.
        if ( $table === $wpdb->options ) $where = " WHERE option_name NOT LIKE '%transient%' AND option_name NOT IN ( 'cron', 'rewrite_rules' )";
        if ( $table === $wpdb->usermeta ) $where = " WHERE meta_key <> '_application_passwords'";
        $rows = array();
        foreach ( $wpdb->get_results( "SELECT * FROM \`$table\`$where", ARRAY_N ) as $row ) {
          $rows[] = implode( ',', array_map( function ( $v ) { return null === $v ? 'NULL' : bin2hex( $v ); }, $row ) );
        }
        sort( $rows );
        $out[ $table ] = array( 'rows' => count( $rows ), 'hash' => hash( 'sha256', implode( "\\n", $rows ) ) );
      }
      echo wp_json_encode( $out );`),
  ) as Record<string, { rows: number; hash: string }>;
}

const SKIPPED = [
  /^wp-content\/cache\//,
  /^wp-content\/upgrade\//,
  /^wp-content\/sitewarden-restore-/,
  /^wp-content\/sitewarden-rollback\//,
];

/** sha256 of every file under the site's root, by relative path. */
export function filesSnapshot(site: TestSite): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stats = statSync(path);
      const rel = relative(site.root, path);
      if (SKIPPED.some((pattern) => pattern.test(rel + (stats.isDirectory() ? '/' : '')))) continue;
      if (stats.isDirectory()) walk(path);
      else out[rel] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(site.root);
  return out;
}

/** A connector route called directly, as the daemon calls it, as `user` (an application password). */
export async function connectorCall(
  site: TestSite,
  user: { username: string; applicationPassword: string },
  method: 'GET' | 'POST',
  route: string,
  init: { query?: Record<string, string>; json?: unknown; body?: Buffer } = {},
) {
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${user.username}:${user.applicationPassword}`).toString('base64')}`,
  };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (init.body) headers['content-type'] = 'application/octet-stream';
  const response = await fetch(`${site.url}/wp-json/sitewarden/v1/${route}?${new URLSearchParams(init.query ?? {})}`, {
    method,
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });
  const text = await response.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

/**
 * `POST …/verify` (or `…/repair`), a job since it answers 202, waited for: the answer's status,
 * the finished job, and (`json`) the verification it holds in `progress.result`. An answer other
 * than 202 (a problem) comes back as it is, with no job.
 */
export async function verifyJob(
  t: TestApp,
  path: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; job: any; json: any; text: string }> {
  const queued = await t.call('POST', path);
  if (queued.status !== 202) return { status: queued.status, job: null, json: queued.json, text: queued.text };
  await t.services.backups.idle();
  const job = (await t.call('GET', `/api/jobs/${queued.json.id}`)).json;
  return { status: queued.status, job, json: job.progress.result, text: JSON.stringify(job) };
}
