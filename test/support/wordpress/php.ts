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

const ANSWER_MARKER = '\0sitewarden-script-answer\0';

/** What a fixture script answers from a test site's server (fixtures/wordpress/script-endpoint.php). */
interface ScriptAnswer {
  stdout: string;
  stderr: string;
  fatal: string | null;
}

/**
 * Runs a fixture script in a test site's own `php -S` (startPhpServer with `scriptToken`): as runPhpScript
 * does with php-cli, at a tenth of the cost, its OPcache warm. Rejects, as a failed php-cli run would, when
 * the script wrote to STDERR (the scripts' way to fail) or died of a fatal error.
 */
export async function runSiteScript(
  site: { url: string; scriptToken: string },
  script: string,
  args: string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const response = await fetch(`${site.url}/__sitewarden-test/script`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-sitewarden-test-token': site.scriptToken },
    body: JSON.stringify({ script, args, input: options.input ?? '' }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  });
  const text = await response.text();
  const marker = text.lastIndexOf(ANSWER_MARKER);
  let answer: ScriptAnswer;
  try {
    if (marker < 0) throw new Error('no answer');
    answer = JSON.parse(text.slice(marker + ANSWER_MARKER.length)) as ScriptAnswer;
  } catch {
    throw new Error(`php ${script} in ${site.url} answered HTTP ${response.status}: ${text.slice(0, 2000)}`);
  }
  // Printed after WordPress's shutdown flushed the capture: after what the answer holds.
  answer.stdout += text.slice(0, marker);
  if (answer.fatal !== null || answer.stderr !== '') {
    throw new Error(
      `php ${script} failed${answer.fatal === null ? '' : ` (${answer.fatal})`}\n--- stderr ---\n${answer.stderr.trim()}\n--- stdout ---\n${answer.stdout.trim().slice(-4000)}`,
    );
  }
  return answer.stdout;
}

/**
 * `php -S` for one site. PHP_CLI_SERVER_WORKERS lets requests run concurrently,
 * including WordPress requesting itself (loopback checks, cron-less jobs).
 */
export function startPhpServer(options: {
  root: string;
  port: number;
  siteDir: string;
  /** Lets runSiteScript run fixture scripts here. */
  scriptToken: string;
}): OwnedProcess {
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
    env: { ...process.env, PHP_CLI_SERVER_WORKERS: '4', SITEWARDEN_TEST_SCRIPT_TOKEN: options.scriptToken },
    cwd: options.root,
  });
}
