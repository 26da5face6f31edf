import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { freeLoopbackPort, waitForLoopbackPort } from '../net.js';
import { runCommand, type OwnedProcess } from '../processes.js';
import { siteFilesDir } from '../work-dir.js';
import { WORDPRESS_FIXTURES } from './paths.js';
import { runPhpScript, runSiteScript, startPhpServer } from './php.js';
import { copyWordPressRelease, defaultRelease, type WordPressRelease } from './releases.js';
import { importTemplate, siteTemplates } from './site-template.js';
import { phpString, renderWpConfig } from './wp-config.js';

type TestUserRole = 'administrator' | 'editor' | 'author' | 'subscriber';

export interface TestUser {
  username: string;
  password: string;
  /** As WordPress displays it: groups of four separated by spaces. */
  applicationPassword: string;
}

export interface TestSite {
  /** 'http://127.0.0.1:PORT', no trailing slash. */
  url: string;
  /** Document root on disk. */
  root: string;
  admin: TestUser;
  createUser(role: TestUserRole): Promise<TestUser>;
  /** Runs PHP code (no `<?php` needed) with WordPress loaded; resolves with stdout, rejects with stderr. */
  php(code: string): Promise<string>;
  /** get_option(), JSON round-tripped (false when the option does not exist). */
  option(name: string): Promise<unknown>;
  /** Stops the server, drops the database, removes the files. Safe to call twice. */
  stop(): Promise<void>;
}

export interface CreateTestSiteOptions {
  /** Default 'pretty' (/%postname%/). */
  permalinks?: 'pretty' | 'plain';
  /** Default true; false turns them off with the wp_is_application_passwords_available filter. */
  applicationPasswords?: boolean;
  /**
   * Default 'debian' (6.1.9), or what SITEWARDEN_TEST_WORDPRESS names (the CI matrix runs the WordPress
   * suite again with 'newest', the newest real release in @wp-playground/wordpress-builds).
   */
  wordpress?: WordPressRelease;
}

/** What a site needs from the run's global setup. */
export interface TestBed {
  mariadbSocket: string;
  pluginMirrorUrl: string;
  testWorkDir: string;
  /** Where each site's directory goes; default `sites/` in testWorkDir. */
  sitesDir?: string;
}

/** A fresh, isolated WordPress (own files, database and port), installed and answering. */
export function createTestSite(options: CreateTestSiteOptions = {}): Promise<TestSite> {
  return provisionTestSite(
    {
      mariadbSocket: inject('mariadbSocket'),
      pluginMirrorUrl: inject('pluginMirrorUrl'),
      testWorkDir: inject('testWorkDir'),
      sitesDir: siteFilesDir(inject('testWorkDir')),
    },
    options,
  );
}

export async function provisionTestSite(bed: TestBed, options: CreateTestSiteOptions = {}): Promise<TestSite> {
  const id = randomBytes(5).toString('hex');
  const siteDir = join(bed.sitesDir ?? join(bed.testWorkDir, 'sites'), id);
  const root = join(siteDir, 'root');
  const dbName = `wp_test_${id}`;
  let server: OwnedProcess | undefined;
  let stopped = false;

  const dropEverything = async () => {
    if (stopped) return;
    stopped = true;
    await server?.stop();
    await runCommand('mariadb', [
      '--no-defaults',
      `--socket=${bed.mariadbSocket}`,
      '-uroot',
      '-e',
      `DROP DATABASE IF EXISTS \`${dbName}\``,
    ]);
    rmSync(siteDir, { recursive: true, force: true });
  };

  const release = options.wordpress ?? defaultRelease();
  try {
    mkdirSync(join(siteDir, 'tmp'), { recursive: true });
    await copyWordPressRelease(release, root);
    writeFileSync(
      join(root, 'wp-config.php'),
      renderWpConfig({
        dbName,
        dbSocket: bed.mariadbSocket,
        mirrorUrl: bed.pluginMirrorUrl,
        tempDir: join(siteDir, 'tmp'),
        applicationPasswords: options.applicationPasswords ?? true,
      }),
    );
    mkdirSync(join(root, 'wp-content/mu-plugins'), { recursive: true });
    copyFileSync(
      join(WORDPRESS_FIXTURES, 'mu-plugins/sitewarden-test-network.php'),
      join(root, 'wp-content/mu-plugins/sitewarden-test-network.php'),
    );

    // The port is part of the URL the database holds, so hold it before installing or importing.
    const scriptToken = randomToken(32);
    const started = await startServerOnFreePort({ root, siteDir, scriptToken });
    server = started.server;
    const url = `http://127.0.0.1:${started.port}`;

    const templates = siteTemplates(bed, join(bed.testWorkDir, 'site-templates'));
    const template = templates.find(release);
    const admin = { username: 'admin', password: randomToken(20) };
    if (template !== undefined) {
      await importTemplate(bed, dbName, template);
    } else {
      await runPhpScript('install.php', [
        root,
        JSON.stringify({
          siteUrl: url,
          title: `Sitewarden test site ${id}`,
          adminUser: admin.username,
          adminPassword: admin.password,
          adminEmail: 'admin@example.test',
          dbSocket: bed.mariadbSocket,
          dbName,
        }),
      ]);
      await templates.save(release, dbName);
    }

    const php = (code: string) => runSiteScript({ url, scriptToken }, 'run-php.php', [root, url], { input: code });
    const finished = JSON.parse(
      await runSiteScript({ url, scriptToken }, 'finish-site.php', [root, url], {
        input: JSON.stringify({
          title: `Sitewarden test site ${id}`,
          adminUser: admin.username,
          adminPassword: admin.password,
          permalinkStructure: (options.permalinks ?? 'pretty') === 'pretty' ? '/%postname%/' : '',
        }),
      }),
    ) as { applicationPassword: string };

    await waitUntilServing(url, server);
    return {
      url,
      root,
      admin: { ...admin, applicationPassword: finished.applicationPassword },
      php,
      option: async (name) =>
        JSON.parse(await php(`echo wp_json_encode( get_option( ${phpString(name)} ) );`)) as unknown,
      createUser: (role) => createUser(php, role),
      stop: dropEverything,
    };
  } catch (error) {
    const serverLog = server ? `\n--- php -S output ---\n${server.outputTail()}` : '';
    await dropEverything().catch(() => undefined);
    throw new Error(`Could not create a WordPress test site: ${(error as Error).message}${serverLog}`, {
      cause: error,
    });
  }
}

async function startServerOnFreePort(options: {
  root: string;
  siteDir: string;
  scriptToken: string;
}): Promise<{ server: OwnedProcess; port: number }> {
  let lastError: unknown;
  // Another process may grab the port between our probe and php binding it.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freeLoopbackPort();
    const server = startPhpServer({ ...options, port });
    try {
      await waitForLoopbackPort(port, { timeoutMs: 10_000, givesUp: () => server.hasExited() });
      return { server, port };
    } catch (error) {
      lastError = new Error(`${(error as Error).message}\n${server.outputTail()}`);
      await server.stop(1_000);
    }
  }
  throw lastError;
}

/** The REST index via the query-string route works with any permalink setting. */
async function waitUntilServing(url: string, server: OwnedProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = '';
  while (Date.now() < deadline && !server.hasExited()) {
    try {
      const response = await fetch(`${url}/?rest_route=/`, { signal: AbortSignal.timeout(5_000) });
      if (response.ok) return;
      last = `HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`site at ${url} is not answering (${server.hasExited() ? 'php -S exited' : last})`);
}

async function createUser(php: (code: string) => Promise<string>, role: TestUserRole): Promise<TestUser> {
  const username = `${role}-${randomToken(6).toLowerCase()}`;
  const password = randomToken(20);
  const applicationPassword = await php(`
    $id = wp_insert_user( array(
      'user_login' => ${phpString(username)},
      'user_pass'  => ${phpString(password)},
      'user_email' => ${phpString(`${username}@example.test`)},
      'role'       => ${phpString(role)},
    ) );
    if ( is_wp_error( $id ) ) { fwrite( STDERR, $id->get_error_message() ); exit( 1 ); }
    $created = WP_Application_Passwords::create_new_application_password( $id, array( 'name' => 'Sitewarden test bed' ) );
    if ( is_wp_error( $created ) ) { fwrite( STDERR, $created->get_error_message() ); exit( 1 ); }
    echo WP_Application_Passwords::chunk_password( $created[0] );
  `);
  return { username, password, applicationPassword };
}

/** Letters and digits only, so it survives any quoting. */
function randomToken(length: number): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  return Array.from(randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join('');
}
