import { join } from 'node:path';
import { runCommand, spawnOwned, type OwnedProcess } from '../processes.js';
import { WORDPRESS_FIXTURES } from './paths.js';

/**
 * php.ini overrides for every PHP process of a test site. No URL fopen and a
 * no-op sendmail: two ways PHP could reach the network without going through
 * WordPress's HTTP API (which the test mu-plugin guards).
 */
const COMMON_INI = ['allow_url_fopen=0', 'sendmail_path=/bin/true', 'memory_limit=512M'];

function iniArgs(extra: string[]): string[] {
  return [...COMMON_INI, ...extra].flatMap((setting) => ['-d', setting]);
}

/** Runs a fixture script (test/support/fixtures/wordpress/<script>) with php-cli; errors go to stderr so failures explain themselves. */
export async function runPhpScript(
  script: string,
  args: string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const { stdout } = await runCommand(
    'php',
    [...iniArgs(['display_errors=stderr', 'log_errors=0']), join(WORDPRESS_FIXTURES, script), ...args],
    // The arguments can hold passwords; the script name is what explains a failure.
    { input: options.input, timeoutMs: options.timeoutMs ?? 60_000, label: `php ${script}` },
  );
  return stdout;
}

/**
 * `php -S` for one site. PHP_CLI_SERVER_WORKERS lets requests run concurrently,
 * including WordPress requesting itself (loopback checks, cron-less jobs).
 */
export function startPhpServer(options: { root: string; port: number; siteDir: string }): OwnedProcess {
  return spawnOwned({
    command: 'php',
    args: [
      ...iniArgs([
        'display_errors=0',
        'log_errors=1',
        `error_log=${join(options.siteDir, 'php-error.log')}`,
        'upload_max_filesize=64M',
        'post_max_size=64M',
        // OPcache on, as under any production PHP (Debian's php-cli leaves it off): the site's code is
        // compiled once per server, not on every request (issue 36: a safe update's test file took 70 s
        // instead of 86), and the connector's own opcache_invalidate and opcache_reset calls are exercised.
        // Tests edit plugin files behind WordPress's back: check mtimes on every request
        // (opcache's default file_update_protection already skips files younger than 2 s).
        'opcache.enable_cli=1',
        'opcache.revalidate_freq=0',
      ]),
      '-S',
      `127.0.0.1:${options.port}`,
      '-t',
      options.root,
      join(WORDPRESS_FIXTURES, 'router.php'),
    ],
    logFile: join(options.siteDir, 'php-server.log'),
    env: { ...process.env, PHP_CLI_SERVER_WORKERS: '4' },
    cwd: options.root,
  });
}
