import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freeLoopbackPort } from './net.js';
import { runCommand, spawnOwned, type OwnedProcess } from './processes.js';

export interface PrivatePostgres {
  /** The superuser's URL to the `postgres` database (trust authentication, loopback only). */
  url: string;
  stop(): Promise<void>;
}

/** Where the clusters live: outside the checkout, as Debian's `postgres` user must reach it (a run directory is 0700 root). */
const PREFIX = 'sitewarden-pg-';
const OWNER_FILE = 'owner.pid';

/**
 * One throwaway PostgreSQL cluster for the whole test run (issue 34): `initdb` into a fresh temporary
 * directory, then `postgres` on 127.0.0.1 and a free port, its unix socket in that directory (never
 * Debian's /var/run/postgresql), no system service. Durability is traded for speed (fsync,
 * synchronous_commit and full_page_writes off). initdb refuses to run as root, so as root (CI) the
 * cluster is Debian's `postgres` user's, and every PostgreSQL program runs as it (setpriv).
 *
 * The server runs in the foreground under the processes.ts watchdog, not detached by `pg_ctl start`
 * (which puts it in a session of its own): a killed test run takes it down. `pg_ctl stop` ends it.
 * Each test file takes a database of its own with `createTestDatabase`.
 */
export async function startPrivatePostgres(deps: { startTimeoutMs?: number } = {}): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  removeStaleClusters();
  const base = mkdtempSync(join(tmpdir(), PREFIX));
  writeFileSync(join(base, OWNER_FILE), String(process.pid));
  const dataDir = join(base, 'data');
  // sun_path is 108 bytes: `<base>/.s.PGSQL.<port>`.
  if (Buffer.byteLength(join(base, '.s.PGSQL.65535')) > 107)
    throw new Error(`PostgreSQL socket path too long: ${base}`);
  const runAs = clusterOwner();
  if (runAs) chownSync(base, runAs.uid, runAs.gid);
  const as = (program: string, args: string[]) =>
    runAs
      ? {
          command: 'setpriv',
          args: ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', join(bin, program), ...args],
        }
      : { command: join(bin, program), args };

  try {
    const initdb = as('initdb', [
      `--pgdata=${dataDir}`,
      '--username=postgres',
      '--auth=trust',
      '--no-locale',
      '--encoding=UTF8',
      '--no-sync',
      '--no-instructions',
    ]);
    await runCommand(initdb.command, initdb.args, { cwd: base, timeoutMs: 120_000, label: 'initdb' });

    // The port is free when asked and taken when postgres binds it: another program may take it between.
    let lastError: Error | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freeLoopbackPort();
      const postgres = as('postgres', [
        '-D',
        dataDir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `port=${port}`,
        '-c',
        `unix_socket_directories=${base}`,
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
        '-c',
        'logging_collector=off',
      ]);
      const server = spawnOwned({
        command: postgres.command,
        args: postgres.args,
        logFile: join(base, 'postgres.log'),
        cwd: base,
      });
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      try {
        await waitForQueries(url, deps.startTimeoutMs ?? 60_000, () => server.hasExited());
      } catch (error) {
        await server.stop(1_000);
        lastError = new Error(
          `PostgreSQL did not start: ${(error as Error).message}\n--- postgres log ---\n${server.outputTail()}`,
        );
        if (/already in use/i.test(server.outputTail())) continue;
        throw lastError;
      }
      return { url, stop: () => stopCluster(server, as('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w']), base) };
    }
    throw lastError ?? new Error('PostgreSQL did not start');
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A database of the run's cluster for one test file, so files stay independent: a fresh one, named
 * uniquely (`label`: a readable part of the name), and its URL. `drop` removes it, closing what is
 * still connected.
 */
/**
 * A pool for a test's own connections to a test database. The database is dropped `WITH (FORCE)` after the
 * test, and the server then ends any connection still closing (57P01, "terminating connection due to
 * administrator command"): `pool.end()` resolves once its connections are asked to close, not once they have.
 * Such an end is an uncaught exception that fails the whole run (it did twice, in runs whose every test
 * passed) unless someone listens: on a connection in use, the connection's own `error`; on an idle one,
 * pg-pool passes it on as the pool's `error`.
 */
export function testPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export async function createTestDatabase(
  clusterUrl: string,
  label = 'test',
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `sw_${label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  await asSuperuser(clusterUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => asSuperuser(clusterUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function asSuperuser(clusterUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Debian's binaries for the newest major installed (`/usr/lib/postgresql/<major>/bin`), found at run time. */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) {
    throw new Error(
      `no PostgreSQL server binaries under ${root}: run \`bash scripts/setup.sh --test\` (Debian's postgresql)`,
    );
  }
  return join(root, majors[0]!, 'bin');
}

/** As root, the cluster belongs to Debian's `postgres` user (initdb refuses root); otherwise to whoever runs the tests. */
function clusterOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error('no `postgres` user to run the test cluster as: run `bash scripts/setup.sh --test`');
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/** Ready means a query is answered (a server starting up accepts connections and refuses them). */
async function waitForQueries(url: string, timeoutMs: number, hasExited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('postgres exited during startup');
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      lastError = error;
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no answer at ${url} after ${timeoutMs} ms (${(lastError as Error | undefined)?.message})`);
}

async function stopCluster(
  server: OwnedProcess,
  pgCtlStop: { command: string; args: string[] },
  base: string,
): Promise<void> {
  try {
    if (!server.hasExited()) await runCommand(pgCtlStop.command, pgCtlStop.args, { cwd: base, timeoutMs: 30_000 });
  } catch {
    // The watchdog's signal below ends it all the same.
  }
  await server.stop(5_000);
  rmSync(base, { recursive: true, force: true });
}

/**
 * Clusters of runs whose owner died (a killed vitest: the watchdog ended the server, the directory
 * stayed). Those of runs still alive are left alone, so two runs may share the machine.
 */
function removeStaleClusters(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = readPid(join(dir, OWNER_FILE));
    if (owner !== undefined && commandLineOf(owner)?.includes('node')) continue;
    // Another run's, made a moment ago and not yet given its owner file.
    if (owner === undefined && Date.now() - (statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 60_000) continue;
    // The server's pid (postmaster.pid's first line), if it outlived its owner and is still this cluster's.
    const server = readPid(join(dir, 'data', 'postmaster.pid'));
    if (server !== undefined && commandLineOf(server)?.includes(dir)) {
      try {
        process.kill(server, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function commandLineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return undefined;
  }
}
