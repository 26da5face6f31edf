/**
 * The cluster half of bench/uptime.ts's `cluster` mode (issue 34): a throwaway PostgreSQL on loopback
 * (test/support/postgres.ts: Debian's binaries, initdb into a temporary directory), a fresh database for
 * each round seeded with connected sites, and uptime workers sharing it, each a process of its own
 * (uptime-worker.ts). A round measures each worker's probe lags and CPU, PostgreSQL's CPU (every process
 * of its server, from /proc), and whether each slot was probed once, from the probes the workers wrote.
 */
import { fork, execFileSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, gte, lt } from 'drizzle-orm';
import pg from 'pg';
import { openStateDatabase, type StateDatabase } from '../../src/db/state-db.js';
import { siteOffsetMs } from '../../src/jobs/spread.js';
import { createId } from '../../src/shared/ids.js';
import { pgSites } from '../../src/sites/index.js';
import type { UptimeConfig } from '../../src/uptime/uptime.config.js';
import { uptimeProbes } from '../../src/uptime/uptime.pg-table.js';
import { createTestDatabase, startPrivatePostgres } from '../../test/support/postgres.js';
import type {
  UptimeWorkerCommand,
  UptimeWorkerMessage,
  UptimeWorkerPlan,
  UptimeWorkerReport,
} from './uptime-worker.js';

const ROOT = resolve(import.meta.dirname, '../..');
const WORKER_SCRIPT = join(ROOT, 'bench/support/uptime-worker.ts');
/** A slot's probe starts at its due time (START_SLICE_MS slices, never before); a timer may fire a millisecond early. */
const EARLY_MS = 50;

export interface ClusterDatabase {
  /** The server's superuser URL (loopback, trust). */
  url: string;
  /** CPU time of every process of the server so far, ms: the postmaster with its reaped children, and those alive. */
  cpuMs(): number;
  stop(): Promise<void>;
}

export async function startClusterDatabase(): Promise<ClusterDatabase> {
  const server = await startPrivatePostgres();
  // The postmaster: a backend's parent (read while the backend lives).
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const postmaster = procStat(rows[0]!.pid)?.ppid;
  await client.end();
  if (postmaster === undefined) {
    await server.stop();
    throw new Error("PostgreSQL's processes are not in this machine's /proc: its CPU cannot be measured");
  }
  const tick = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  return {
    url: server.url,
    cpuMs() {
      const own = procStat(postmaster);
      if (!own) throw new Error(`PostgreSQL's postmaster (pid ${postmaster}) is gone`);
      let ticks = own.ticks + own.childTicks;
      for (const name of readdirSync('/proc')) {
        if (!/^\d+$/.test(name)) continue;
        const child = procStat(Number(name));
        if (child?.ppid === postmaster) ticks += child.ticks;
      }
      return ticks * tick;
    },
    stop: server.stop,
  };
}

/** A process's parent, its own CPU ticks (utime + stime) and its reaped children's (cutime + cstime); undefined once gone. */
function procStat(pid: number): { ppid: number; ticks: number; childTicks: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The fields after the command's closing parenthesis, from the third (state): ppid is the 4th, utime the 14th.
  const field = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const at = (n: number) => Number(field[n - 3]);
  return { ppid: at(4), ticks: at(14) + at(15), childTicks: at(16) + at(17) };
}

export interface ClusterRound {
  workers: UptimeWorkerReport[];
  /** PostgreSQL's CPU over the measured span, ms. */
  postgresCpuMs: number;
  slots: SlotCount;
}

/**
 * A round: a fresh database with a connected site for each URL, `workers` uptime workers started on it,
 * measured from `warmupSeconds` after they are all up to `seconds`; then, once the probes of the slots due
 * in the measured span are written, the workers stopped and the slots counted.
 */
export async function runClusterRound(
  database: ClusterDatabase,
  urls: readonly string[],
  {
    workers,
    config,
    seconds,
    warmupSeconds,
    profile,
  }: {
    workers: number;
    config: UptimeConfig;
    seconds: number;
    warmupSeconds: number;
    /** Each worker's CPU profile of the measured span, in `${profile}-worker-N.cpuprofile`. */
    profile?: string | undefined;
  },
): Promise<ClusterRound> {
  const db = await createTestDatabase(database.url, 'uptime-bench');
  const state = await openStateDatabase({ url: db.url, sqlitePath: '' });
  const children: ChildProcess[] = [];
  try {
    const siteIds = await seedSites(state, urls);
    for (let n = 1; n <= workers; n++)
      children.push(
        startWorker({
          url: db.url,
          workerId: `bench-worker-${n}`,
          config,
          ...(profile && { profile: `${profile}-worker-${n}.cpuprofile` }),
        }),
      );
    await Promise.all(children.map((child) => nextMessage(child)));
    await sleep(warmupSeconds * 1000);

    const command = (word: UptimeWorkerCommand) => children.forEach((child) => child.send(word));
    const cpu0 = database.cpuMs();
    command('measure');
    const from = Date.now();
    await sleep((seconds - warmupSeconds) * 1000);
    const reports = children.map((child) => nextMessage(child));
    command('report');
    const until = Date.now();
    const postgresCpuMs = database.cpuMs() - cpu0;
    const measured = await Promise.all(reports);

    // The last slots' probes start within a second or so and end within their timeout; then they are written.
    await sleep(config.defaultTimeoutMs + 3_000);
    await Promise.all(children.map((child) => stopWorker(child)));
    const slots = await countSlots(state, siteIds, {
      from,
      until,
      intervalMs: config.defaultIntervalSeconds * 1000,
      recheckMs: config.recheckDelaySeconds * 1000,
      timeoutMs: config.defaultTimeoutMs,
    });
    return { workers: measured.map(reportOf), postgresCpuMs, slots };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await state.close();
    await db.drop();
  }
}

function reportOf(message: UptimeWorkerMessage): UptimeWorkerReport {
  if (!('report' in message)) throw new Error('an uptime worker answered `report` with something else');
  return message.report;
}

async function seedSites(state: StateDatabase, urls: readonly string[]): Promise<string[]> {
  const now = new Date();
  const rows = urls.map((url) => ({
    id: createId('site'),
    url,
    restUrl: `${url}/wp-json/`,
    state: 'connected' as const,
    createdAt: now,
    updatedAt: now,
    connectedAt: now,
  }));
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    await state.run((db) => db.insert(pgSites).values(chunk));
  }
  return rows.map((row) => row.id);
}

function startWorker(plan: UptimeWorkerPlan): ChildProcess {
  return fork(WORKER_SCRIPT, {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_UPTIME_WORKER: JSON.stringify(plan) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The worker's next message; a worker that exits first fails the round. */
function nextMessage(child: ChildProcess): Promise<UptimeWorkerMessage> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`an uptime worker exited (${code}) mid-round`));
    child.once('exit', onExit);
    child.once('message', (message: UptimeWorkerMessage) => {
      child.off('exit', onExit);
      resolve(message);
    });
  });
}

async function stopWorker(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop' satisfies UptimeWorkerCommand);
  await exited;
}

/** The slots due in the measured span, all sites together, by how many times each was probed. */
interface SlotCount {
  slots: number;
  once: number;
  /** Slots probed more than once. */
  doubled: number;
  /** Slots with no probe starting within the recheck delay of their due time. */
  missed: number;
  /**
   * Slots that came while the site's previous probe (a re-check) still waited for its timeout, skipped as
   * the scheduler does (one probe of a site at a time): with an interval shorter than a timeout, the re-check
   * delay and a timeout (25 s by default), a hanging site's re-check reaches into its next slot.
   */
  overlapped: number;
  /** Probes of those sites between slots (a quick re-check after an unconfirmed failure). */
  rechecks: number;
}

/**
 * Counts each site's probes per slot from the probes written, for the slots due in [from, until). A probe
 * belongs to the slot whose due time it starts within `recheckMs` of (a slot's probe starts a little after
 * its due time; a re-check comes `recheckMs` after a probe that failed); a probe that started later than
 * that counts as a re-check, and its slot as missed.
 */
async function countSlots(
  state: StateDatabase,
  siteIds: readonly string[],
  {
    from,
    until,
    intervalMs,
    recheckMs,
    timeoutMs,
  }: { from: number; until: number; intervalMs: number; recheckMs: number; timeoutMs: number },
): Promise<SlotCount> {
  const rows = await state.run((db) =>
    db
      .select({ siteId: uptimeProbes.siteId, at: uptimeProbes.at, cause: uptimeProbes.cause })
      .from(uptimeProbes)
      .where(and(gte(uptimeProbes.at, from - intervalMs), lt(uptimeProbes.at, until + intervalMs))),
  );
  const probesOf = new Map<string, typeof rows>();
  for (const row of rows) {
    const probes = probesOf.get(row.siteId);
    if (probes) probes.push(row);
    else probesOf.set(row.siteId, [row]);
  }
  const count: SlotCount = { slots: 0, once: 0, doubled: 0, missed: 0, overlapped: 0, rechecks: 0 };
  for (const siteId of siteIds) {
    const offset = siteOffsetMs(siteId, intervalMs, 1);
    const first = Math.ceil((from - offset) / intervalMs);
    const perSlot = new Map<number, number>();
    const probes = probesOf.get(siteId) ?? [];
    const runningAt = (due: number) =>
      probes.some(({ at, cause }) => cause === 'timeout' && at < due && at + timeoutMs > due);
    for (const { at } of probes) {
      const slot = Math.floor((at - offset + EARLY_MS) / intervalMs);
      const due = offset + slot * intervalMs;
      if (due < from || due >= until) continue;
      if (at - due < recheckMs) perSlot.set(slot, (perSlot.get(slot) ?? 0) + 1);
      else count.rechecks++;
    }
    for (let slot = first; offset + slot * intervalMs < until; slot++) {
      const made = perSlot.get(slot) ?? 0;
      count.slots++;
      if (made === 1) count.once++;
      else if (made > 1) count.doubled++;
      else if (runningAt(offset + slot * intervalMs)) count.overlapped++;
      else count.missed++;
    }
  }
  return count;
}
