import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Agent, fetch as undiciFetch } from 'undici';
import { createTestSite, type TestSite } from './wordpress/index.js';
import { installConnector } from './wordpress-state.js';
import { trimBrowserAssets } from './lean-site.js';
import { eventsInOutput, noteEmitted } from './event-coverage.js';

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
const CLI = resolve(PROJECT_ROOT, 'dist/src/cli.js');

/** The tests of the real process run the compiled CLI, as systemd does; build it first. */
export function buildOnce(): void {
  // Built already (scripts/test.sh builds before the suite): test files run side by side, and a
  // rebuild rewrites every file of dist/ while another file's daemon or CLI is loading them.
  if (builtAfterSources()) return;
  const result = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`build failed:\n${result.stdout}${result.stderr}`);
}

/** Whether every compiled file is newer than every source file. */
function builtAfterSources(): boolean {
  const mtimes = (dir: string, suffix: string): number[] =>
    existsSync(dir)
      ? readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
          .map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs)
      : [];
  const compiled = mtimes(join(PROJECT_ROOT, 'dist/src'), '.js');
  const sources = [
    ...mtimes(join(PROJECT_ROOT, 'src'), '.ts'),
    statSync(join(PROJECT_ROOT, 'tsconfig.build.json')).mtimeMs,
  ];
  return existsSync(CLI) && compiled.length > 0 && Math.min(...compiled) > Math.max(...sources);
}

/**
 * The test sites, mirrors and receivers are on loopback, which the daemon refuses unless allowed (a test may override it).
 * Overload shedding off: on a loaded CI machine a daemon's loop lags past any bound now and then, and a journey's
 * request answered 503 tests the machine, not the journey (shedding has its own tests: test/http/overload.test.ts).
 */
const LOOPBACK_ALLOWED = { SITEWARDEN_ALLOWED_NETWORKS: '127.0.0.0/8,::1', SITEWARDEN_OVERLOAD_LAG_MS: '0' };

export function runCli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...LOOPBACK_ALLOWED, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

/**
 * runCli without blocking this process: for commands that talk to a server the test itself runs
 * (s3rver), which spawnSync would stall until it timed out.
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...LOOPBACK_ALLOWED, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The memory settings the systemd unit starts the daemon with (its `Environment=MALLOC_*` and `NODE_OPTIONS` lines), as scripts/start.sh does. */
export function unitMemoryEnv(): Record<string, string> {
  const unit = readFileSync(join(PROJECT_ROOT, 'systemd/sitewarden.service'), 'utf8');
  return Object.fromEntries(
    [...unit.matchAll(/^Environment=(MALLOC_[A-Z_]+|NODE_OPTIONS)=(.*)$/gm)].map((match) => [match[1]!, match[2]!]),
  );
}

/** The unit's memory settings under `env`; a NODE_OPTIONS of the caller's (a bench's sampler) comes after the unit's. */
function withUnitMemoryEnv(env: Record<string, string>): Record<string, string> {
  const unit = unitMemoryEnv();
  const nodeOptions = [unit.NODE_OPTIONS, env.NODE_OPTIONS].filter(Boolean).join(' ');
  return { ...unit, ...env, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) };
}

/** Starts `sitewarden start` (as the systemd unit runs it) and resolves once it logs `daemon.started`, with the port it bound. */
export async function startDaemonProcess(
  env: Record<string, string>,
  /** `start`'s flags (`--role worker --kinds backups`). */
  args: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number; logs: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'start', ...args], {
    env: { PATH: process.env.PATH ?? '', SITEWARDEN_PORT: '0', ...LOOPBACK_ALLOWED, ...withUnitMemoryEnv(env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  // The real process's events count for the end-of-run catalogue check (test/support/event-coverage.ts).
  child.once('close', () => noteEmitted(eventsInOutput(output)));
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`daemon did not start:\n${output}`)), 20_000);
    const check = () => {
      const match = /"event":"daemon.started"[^\n]*"listen":"[^"]*:(\d+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(Number(match[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => fail(new Error(`daemon exited with ${code}:\n${output}`)));
  });
  return { child, port, logs: () => output, exited };
}

/**
 * No connection kept alive between a test's calls to a daemon: `runCli` (spawnSync) blocks this process, past
 * the daemon's keep-alive timeout when the machine is busy, and the next call then went out on a connection
 * the daemon had closed meanwhile ("other side closed", a data-dir-lock run under load).
 */
const ONE_REQUEST_A_CONNECTION = new Agent({ pipelining: 0 });

/**
 * Calls the API of a daemon process with a token; `port` is read on each call, so the caller
 * keeps working across restarts of the daemon.
 */
export function daemonApi(port: () => number, token: string) {
  return async (method: string, path: string, json?: unknown) => {
    const response = await undiciFetch(`http://127.0.0.1:${port()}${path}`, {
      dispatcher: ONE_REQUEST_A_CONNECTION,
      method,
      headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
    return { status: response.status, json: (await response.json()) as any };
  };
}

export type DaemonApi = ReturnType<typeof daemonApi>;
/** A daemon started by `startDaemonProcess`: its child, port, logs and exit. */
export type DaemonProcess = Awaited<ReturnType<typeof startDaemonProcess>>;

/** The API of the daemon on `dataDir`, as its first start's admin token allows. */
export function adminApi(dataDir: string, port: () => number): DaemonApi {
  return daemonApi(port, readFileSync(join(dataDir, 'admin-token'), 'utf8').trim());
}

/** Connects a test site through the daemon's API, as an operator would; returns the site's id. */
export async function connectSite(call: DaemonApi, site: TestSite): Promise<string> {
  const connected = await call('POST', '/api/sites', {
    url: site.url,
    username: site.admin.username,
    applicationPassword: site.admin.applicationPassword,
  });
  if (connected.status !== 201)
    throw new Error(`connecting the site answered ${connected.status}: ${JSON.stringify(connected.json)}`);
  return connected.json.id as string;
}

/** Queues a manual backup of a site through the daemon's API. */
export async function queueBackup(call: DaemonApi, siteId: string): Promise<string> {
  const queued = await call('POST', `/api/sites/${siteId}/backups`);
  if (queued.status !== 202)
    throw new Error(`queueing a backup answered ${queued.status}: ${JSON.stringify(queued.json)}`);
  return queued.json.id as string;
}

/** The moment a test stops a backup in its middle (a kill, a cancel): running, some of its files stored. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the backup as the API answers it
export const storingFiles = (backup: any): boolean => backup.status === 'running' && backup.progress.filesDone > 0;

/**
 * Polls a backup every 20 ms until `reached` holds for it (true), or gives up after `polls` (false).
 * A backup that ends (completed or failed) before that fails the test: the moment was missed.
 */
export async function waitForBackup(
  call: DaemonApi,
  siteId: string,
  backupId: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the backup as the API answers it
  reached: (backup: any) => boolean,
  polls = 1500,
): Promise<boolean> {
  for (let poll = 0; poll < polls; poll++) {
    const backup = (await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json;
    if (reached(backup)) return true;
    if (backup.status === 'completed' || backup.status === 'failed')
      throw new Error(`the backup ended before the moment the test waits for: ${JSON.stringify(backup)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/**
 * For tests of the daemon process: a real site with the connector (and, with `uploadMb`, one
 * large upload, so a backup of it runs long enough to be caught in the middle) and a fresh data
 * directory; both go when the file's tests end. `lean`: without core's browser assets and the
 * bundled themes but the default one (lean-site.ts), for a whole-site backup of fewer files.
 * `slowRangeMs`: the site takes that long over each range of a file it sends a backup (8 MiB),
 * so a modest upload keeps a backup busy for seconds at little CPU; random bytes are incompressible,
 * and a large upload's hashing and compressing were a whole core's work for most of a minute.
 */
export function useDaemonSite(
  name: string,
  { uploadMb = 0, lean = false, slowRangeMs = 0 }: { uploadMb?: number; lean?: boolean; slowRangeMs?: number } = {},
): { site: TestSite; dataDir: string } {
  const bed = {} as { site: TestSite; dataDir: string };
  beforeAll(async () => {
    buildOnce();
    bed.site = await createTestSite();
    if (lean) trimBrowserAssets(bed.site);
    await installConnector(bed.site);
    if (uploadMb > 0) {
      mkdirSync(join(bed.site.root, 'wp-content/uploads/2026/02'), { recursive: true });
      writeFileSync(join(bed.site.root, 'wp-content/uploads/2026/02/film.bin'), randomBytes(uploadMb * 1024 * 1024));
    }
    if (slowRangeMs > 0) slowFileRanges(bed.site, slowRangeMs);
    bed.dataDir = mkdtempSync(join(tmpdir(), `sitewarden-${name}-`));
  });
  afterAll(async () => {
    await bed.site?.stop();
    if (!bed.dataDir) return;
    killLeftovers(bed.dataDir);
    rmSync(bed.dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  return bed;
}

/** The site sleeps `ms` before answering each file range a backup asks for (a slow disk or a busy host, as seen from the daemon). */
function slowFileRanges(site: TestSite, ms: number): void {
  mkdirSync(join(site.root, 'wp-content/mu-plugins'), { recursive: true });
  writeFileSync(
    join(site.root, 'wp-content/mu-plugins/sitewarden-slow-file-ranges.php'),
    `<?php
add_filter( 'rest_pre_dispatch', function ( $result, $server, $request ) {
  if ( '/sitewarden/v1/backup/file' === $request->get_route() ) {
    usleep( ${Math.round(ms * 1000)} );
  }
  return $result;
}, 10, 3 );
`,
  );
}

/**
 * Kills what a daemon killed with SIGKILL left running on its data directory: systemd would kill its whole
 * control group, a test kills only the daemon. A Lighthouse audit's Chromium went on writing its profile
 * under the data directory while the test removed it (ENOTEMPTY), and on using a core after the test.
 */
function killLeftovers(dataDir: string): void {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // Gone meanwhile.
    }
    if (!commandLine.includes(`${dataDir}/`) || Number(pid) === process.pid) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}
