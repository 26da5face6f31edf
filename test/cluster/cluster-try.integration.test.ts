import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, daemonApi, PROJECT_ROOT } from '../support/daemon-process.js';
import { testPool } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

const SCRIPT = join(PROJECT_ROOT, 'scripts/cluster-try.sh');

/** What the try-out printed once its three processes were ready. */
interface Printed {
  apiPort: number;
  workerPorts: number[];
  tokenFile: string;
  settingsFile: string;
}

function parsePrinted(out: string): Printed {
  const api = /dashboard and API {2}http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
  const workers = /workers \([^)]*\) +http:\/\/127\.0\.0\.1:(\d+)\/readyz {2}http:\/\/127\.0\.0\.1:(\d+)\/readyz/.exec(
    out,
  );
  const token = /TOKEN=\$\(cat (\S+)\)/.exec(out);
  const settings = /\. (\S+\/cluster\.env);/.exec(out);
  if (!api || !workers || !token || !settings) throw new Error(`unexpected output:\n${out}`);
  return {
    apiPort: Number(api[1]),
    workerPorts: [Number(workers[1]), Number(workers[2])],
    tokenFile: token[1]!,
    settingsFile: settings[1]!,
  };
}

/** The processes whose command line or environment names `dir` (this test's own excepted). */
function processesOf(dir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
        return cmdline.includes(`${dir}/`) || environ.includes(`=${dir}/`);
      } catch {
        return false; // Gone meanwhile.
      }
    })
    .map(Number);
}

/** Whether the process runs: a zombie (ended, not yet reaped by its parent, as PostgreSQL's is for a moment after `pg_ctl stop`) does not. */
const alive = (pid: number): boolean => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

/**
 * scripts/cluster-try.sh, the one command docs/cluster.md gives to try cluster mode on one machine (issue 34,
 * "Done when"): a throwaway PostgreSQL, an API process and two workers on loopback, run as an operator runs it,
 * then stopped with Ctrl-C.
 */
describe('the cluster try-out (scripts/cluster-try.sh)', () => {
  const dir = join(tmpdir(), `sitewarden-try-test-${randomBytes(4).toString('hex')}`);
  let script: ChildProcess | undefined;

  // Built already, or the script would build (and set up) itself.
  beforeAll(() => buildOnce());
  afterAll(() => {
    // What a failed test left running or on disk.
    if (script?.pid !== undefined && script.exitCode === null) process.kill(-script.pid, 'SIGKILL');
    for (const pid of processesOf(dir)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a directory that is not its own, and one not empty, naming why', () => {
    const notEmpty = `${dir}-not-empty`;
    mkdirSync(notEmpty);
    writeFileSync(join(notEmpty, 'notes.txt'), 'mine\n');
    try {
      const stop = spawnSync('bash', [SCRIPT, '--stop', notEmpty], { encoding: 'utf8' });
      expect(stop.status).toBe(1);
      expect(stop.stderr).toContain(`cluster-try: no try-out in ${notEmpty} (no try.pid there)`);
      const start = spawnSync('bash', [SCRIPT, '--dir', notEmpty], { encoding: 'utf8' });
      expect(start.status).toBe(1);
      expect(start.stderr).toContain(`cluster-try: ${notEmpty} is not empty`);
      // Both left it as it was.
      expect(readFileSync(join(notEmpty, 'notes.txt'), 'utf8')).toBe('mine\n');
    } finally {
      rmSync(notEmpty, { recursive: true, force: true });
    }
  });

  it('runs PostgreSQL, an API process and two workers as one cluster, and Ctrl-C leaves nothing running', async () => {
    // In a process group of its own, as in a terminal: Ctrl-C is a SIGINT to the whole group.
    script = spawn('bash', [SCRIPT, '--dir', dir], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A setting of the caller's reaches every process: here, a short shutdown.
      env: { PATH: process.env.PATH ?? '', SITEWARDEN_SHUTDOWN_GRACE_MS: '5000' },
    });
    let out = '';
    let err = '';
    script.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    script.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => script!.once('exit', (code) => resolve(code)));
    await waitFor(
      () => out.includes('Ctrl-C stops it all') || script!.exitCode !== null,
      120_000,
      () => `the try-out's ready lines\n${out}\n${err}`,
    );
    expect(script.exitCode, `${out}\n${err}`).toBeNull();
    const printed = parsePrinted(out);

    // Each process is ready; the workers answer nothing but health and readiness.
    for (const port of [printed.apiPort, ...printed.workerPorts]) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready' });
    }
    for (const port of printed.workerPorts) expect((await fetch(`http://127.0.0.1:${port}/api/jobs`)).status).toBe(404);
    // The API answers with the token its first start wrote, from the cluster's database.
    const call = daemonApi(() => printed.apiPort, readFileSync(printed.tokenFile, 'utf8').trim());
    expect(await call('GET', '/api/jobs')).toEqual({ status: 200, json: { items: [], nextCursor: null } });
    // The settings file it printed names the cluster's database (made with the C collation), where the first start's admin is.
    const settings = new Map(
      readFileSync(printed.settingsFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    expect([...settings.keys()]).toEqual([
      'SITEWARDEN_DATABASE_URL',
      'SITEWARDEN_SECRET_KEY',
      'SITEWARDEN_BLOB_TYPE',
      'SITEWARDEN_BLOB_PATH',
    ]);
    expect(settings.get('SITEWARDEN_BLOB_PATH')).toBe(join(dir, 'blobs'));
    const client = testPool({ connectionString: settings.get('SITEWARDEN_DATABASE_URL') });
    try {
      const { rows } = await client.query<{ username: string; collation: string }>(
        'select username, (select datcollate from pg_database where datname = current_database()) as collation from users',
      );
      expect(rows).toEqual([{ username: 'admin', collation: 'C' }]);
    } finally {
      await client.end();
    }

    // What runs: the script, PostgreSQL (its pid file's first line) and the three processes, each given the setting.
    const daemons = ['api', 'worker-1', 'worker-2'].map((name) =>
      Number(readFileSync(join(dir, `${name}.pid`), 'utf8')),
    );
    for (const pid of daemons)
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('SITEWARDEN_SHUTDOWN_GRACE_MS=5000');
    const postgres = Number(readFileSync(join(dir, 'postgres/data/postmaster.pid'), 'utf8').split('\n')[0]);
    const pids = [script.pid!, postgres, ...daemons];
    expect(pids.every(alive)).toBe(true);

    process.kill(-script.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(err).toContain(`cluster-try: stopped; ${dir} removed`);
    expect(pids.filter(alive)).toEqual([]);
    expect(processesOf(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  }, 180_000);
});
