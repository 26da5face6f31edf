import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { runCommand, spawnOwned } from './processes.js';

export interface PrivateMariaDb {
  socketPath: string;
  stop(): Promise<void>;
}

/**
 * One throwaway MariaDB server for the whole test run: its own datadir, unix
 * socket only (no TCP port, so nothing else on the machine can reach it or clash
 * with it), root without a password. Durability is traded for speed.
 */
export async function startPrivateMariaDb(deps: { dir: string; startTimeoutMs?: number }): Promise<PrivateMariaDb> {
  const dataDir = join(deps.dir, 'mysql-data');
  const socketPath = join(deps.dir, 'mysql.sock');
  // sun_path is 108 bytes; a deep checkout would otherwise fail obscurely.
  if (Buffer.byteLength(socketPath) > 100) throw new Error(`MariaDB socket path too long: ${socketPath}`);
  mkdirSync(dataDir, { recursive: true });

  await runCommand('mariadb-install-db', [
    '--no-defaults',
    '--user=root',
    `--datadir=${dataDir}`,
    '--auth-root-authentication-method=normal',
    // Without it the script resolves the host name (a DNS query).
    '--skip-name-resolve',
    '--skip-test-db',
  ]);

  const server = spawnOwned({
    command: 'mariadbd',
    args: [
      '--no-defaults',
      '--user=root',
      `--datadir=${dataDir}`,
      `--socket=${socketPath}`,
      `--pid-file=${join(deps.dir, 'mariadbd.pid')}`,
      '--skip-networking',
      '--skip-name-resolve',
      '--feedback=OFF',
      '--skip-log-bin',
      '--innodb-flush-log-at-trx-commit=0',
      '--innodb-doublewrite=0',
      '--max-connections=500',
      '--character-set-server=utf8mb4',
    ],
    logFile: join(deps.dir, 'mariadbd.log'),
  });

  try {
    await waitForSocket(socketPath, deps.startTimeoutMs ?? 30_000, () => server.hasExited());
  } catch (error) {
    await server.stop(1_000);
    throw new Error(`MariaDB did not start: ${(error as Error).message}\n--- mariadbd log ---\n${server.outputTail()}`);
  }

  return {
    socketPath,
    stop: () => server.stop(30_000),
  };
}

/** Ready means the server sends its handshake greeting on the socket. */
async function waitForSocket(socketPath: string, timeoutMs: number, hasExited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('mariadbd exited during startup');
    if (await greets(socketPath)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no answer on ${socketPath} after ${timeoutMs} ms`);
}

function greets(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('data', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(1_000, () => done(false));
  });
}
