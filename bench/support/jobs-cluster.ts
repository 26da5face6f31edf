/**
 * One arm of the cluster's jobs bench (bench/jobs.ts, issue 34): the built daemon (`dist/`) as real processes, a
 * job of one kind queued through the API for each site, timed until the last one ended. In cluster mode a fresh
 * database on the bench's PostgreSQL, a fresh blob store (a directory, as processes on one machine share it), one
 * `--role api` process and `workers` processes of `--role worker --kinds KIND`; without workers, the single
 * machine's daemon on SQLite (`--role all`, its local store) as the baseline. Each arm starts from an empty store,
 * so every backup is a site's first, and a worker's CPU is measured from its first job on.
 *
 * The sites are connected (their inventory read) and their scheduled audits turned off before the clock starts;
 * the wall time runs from the first job queued to the last one's `finishedAt`; the CPU of every process over that
 * span is read by role (process-cpu.ts; PostgreSQL's as bench/support/uptime-cluster.ts reads it).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminApi, connectSite, startDaemonProcess, type DaemonApi } from '../../test/support/daemon-process.js';
import { createTestDatabase } from '../../test/support/postgres.js';
import type { TestSite } from '../../test/support/wordpress/test-site.js';
import { sampleProcessCpu, type LabelOf } from './process-cpu.js';
import type { ClusterDatabase } from './uptime-cluster.js';

type DaemonProcess = Awaited<ReturnType<typeof startDaemonProcess>>;

export type JobsKind = 'backups' | 'audits';

/** The job's kind (`GET /api/jobs?kind=`) and how one is queued for a site. */
const KINDS: Record<JobsKind, { job: string; queue: (call: DaemonApi, siteId: string) => ReturnType<DaemonApi> }> = {
  backups: { job: 'backup', queue: (call, siteId) => call('POST', `/api/sites/${siteId}/backups`) },
  audits: {
    job: 'audit',
    queue: (call, siteId) => call('POST', `/api/sites/${siteId}/performance`, { formFactor: 'mobile' }),
  },
};

/** Jobs an arm may queue: one page of `GET /api/jobs` tells how they all ended. */
export const MAX_JOBS = 100;
const POLL_MS = 500;
/** An arm that has not ended by then has failed: a job stuck, a worker gone. */
const ARM_TIMEOUT_MS = 30 * 60_000;

export interface ArmResult {
  jobs: number;
  /** From the first job queued to the last one's end. */
  wallMs: number;
  /**
   * CPU over that span by role, ms: `api`, `worker 1`, `worker 2`, `one process` (the daemon's own process), `audit
   * workers` (Lighthouse's node processes), `Chromium`, `PHP`, `MariaDB`, `PostgreSQL`.
   */
  cpuMs: Map<string, number>;
  /** Each job's run, from its start to its end (ms), and its wait in the queue before it. */
  runMs: number[];
  waitMs: number[];
  /** Backups: their sites' files, what they downloaded, and the compressed bytes they added to the store, summed. */
  bytes?: { total: number; transferred: number; stored: number };
  /** The jobs each worker ran (its log names them), in the workers' order. */
  perWorker: number[];
}

/** Runs one arm: `workers` workers of `kind` on `database`, or, with none, one process on SQLite. */
export async function runJobsArm(
  kind: JobsKind,
  workers: number,
  sites: readonly TestSite[],
  database: ClusterDatabase,
): Promise<ArmResult> {
  if (sites.length > MAX_JOBS) throw new Error(`at most ${MAX_JOBS} sites an arm, not ${sites.length}`);
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-jobs-'));
  const dataDir = (name: string) => {
    const path = join(dir, name);
    mkdirSync(path);
    return path;
  };
  const db = workers > 0 ? await createTestDatabase(database.url, 'jobs-bench') : undefined;
  // What every process of a cluster shares: the database, the key, the blob store.
  const shared = db && {
    SITEWARDEN_DATABASE_URL: db.url,
    SITEWARDEN_SECRET_KEY: randomBytes(32).toString('base64'),
    SITEWARDEN_BLOB_TYPE: 'directory',
    SITEWARDEN_BLOB_PATH: dataDir('blobs'),
  };
  const start = (name: string, args: string[]) =>
    startDaemonProcess({ SITEWARDEN_DATA_DIR: dataDir(name), SITEWARDEN_BACKUP_INTERVAL_HOURS: '0', ...shared }, args);
  const processes: DaemonProcess[] = [];
  try {
    const front = await start('front', db ? ['--role', 'api'] : []);
    processes.push(front);
    for (let n = 1; n <= workers; n++)
      processes.push(await start(`worker-${n}`, ['--role', 'worker', '--kinds', kind]));
    const call = adminApi(join(dir, 'front'), () => front.port);
    const siteIds: string[] = [];
    for (const site of sites) siteIds.push(await connectQuietly(call, site));
    const cpu = sampleProcessCpu(labelsOf(processes, workers > 0));
    try {
      const postgresFrom = db ? database.cpuMs() : 0;
      const { queued, wallMs, runMs, waitMs } = await runJobs(kind, call, siteIds);
      const cpuMs = cpu.read();
      if (db) cpuMs.set('PostgreSQL', database.cpuMs() - postgresFrom);
      const perWorker = processes
        .slice(1)
        .map((worker) => queued.filter(({ id }) => worker.logs().includes(id)).length);
      const bytes = kind === 'backups' ? await backupBytes(call, queued) : undefined;
      return { jobs: queued.length, wallMs, cpuMs, runMs, waitMs, perWorker, ...(bytes && { bytes }) };
    } finally {
      cpu.stop();
    }
  } catch (error) {
    for (const daemon of processes) console.error(`daemon output (tail):\n${daemon.logs().slice(-3000)}`);
    throw error;
  } finally {
    for (const daemon of processes) {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Connects a site through the API, its scheduled audits off: only the jobs the bench queues run. */
async function connectQuietly(call: DaemonApi, site: TestSite): Promise<string> {
  const siteId = await connectSite(call, site);
  const patched = await call('PATCH', `/api/sites/${siteId}`, { performance: { enabled: false } });
  if (patched.status !== 200)
    throw new Error(`PATCH /api/sites/${siteId}: ${patched.status} ${JSON.stringify(patched.json)}`);
  return siteId;
}

/** Queues one job of `kind` a site and waits for them all to end; each must succeed. */
async function runJobs(kind: JobsKind, call: DaemonApi, siteIds: readonly string[]) {
  const { job, queue } = KINDS[kind];
  const from = Date.now();
  const queued: Queued[] = [];
  for (const siteId of siteIds) {
    const answer = await queue(call, siteId);
    if (answer.status !== 202) throw new Error(`queueing a ${job}: ${answer.status} ${JSON.stringify(answer.json)}`);
    queued.push({ id: answer.json.id as string, siteId });
  }
  const ids = new Set(queued.map(({ id }) => id));
  for (const until = from + ARM_TIMEOUT_MS; Date.now() < until; await sleep(POLL_MS)) {
    const listed = await call('GET', `/api/jobs?kind=${job}&limit=${MAX_JOBS}`);
    const ours = (listed.json.items as JobView[]).filter((item) => ids.has(item.id));
    const ended = ours.filter((item) => item.finishedAt !== null);
    if (ended.length < ids.size) continue;
    const failed = ended.find((item) => item.state !== 'succeeded');
    if (failed) throw new Error(`a ${job} ended ${failed.state}: ${JSON.stringify(failed)}`);
    const at = (time: string | null) => Date.parse(time!);
    return {
      queued,
      wallMs: Math.max(...ended.map((item) => at(item.finishedAt))) - from,
      runMs: ended.map((item) => at(item.finishedAt) - at(item.startedAt)),
      waitMs: ended.map((item) => at(item.startedAt) - at(item.createdAt)),
    };
  }
  throw new Error(`the ${job}s had not all ended after ${ARM_TIMEOUT_MS / 60_000} minutes`);
}

interface Queued {
  id: string;
  siteId: string;
}

/** The backups' bytes (`GET /api/sites/{id}/backups/{id}`), summed. */
async function backupBytes(call: DaemonApi, backups: readonly Queued[]) {
  const sum = { total: 0, transferred: 0, stored: 0 };
  for (const { id, siteId } of backups) {
    const { bytes } = (await call('GET', `/api/sites/${siteId}/backups/${id}`)).json as { bytes: typeof sum };
    sum.total += bytes.total;
    sum.transferred += bytes.transferred;
    sum.stored += bytes.stored;
  }
  return sum;
}

interface JobView {
  id: string;
  state: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/**
 * Each process's role: the daemons by their own process (the first the API or the one process, then the workers),
 * what they start by its name (an audit's Lighthouse runs in a node process of its own, its Chromium apart), the
 * sites' `php -S` and MariaDB. PostgreSQL is measured whole by its postmaster (uptime-cluster.ts).
 */
function labelsOf(processes: readonly DaemonProcess[], cluster: boolean): LabelOf {
  const daemons = new Map(
    processes.map((daemon, n) => [daemon.child.pid!, n === 0 ? (cluster ? 'api' : 'one process') : `worker ${n}`]),
  );
  return (top, own) => {
    const daemon = daemons.get(top.pid);
    if (daemon !== undefined) {
      if (own.pid === top.pid) return daemon;
      return /chrom/i.test(own.comm) ? 'Chromium' : 'audit workers';
    }
    if (top.comm === 'php') return 'PHP';
    if (top.comm === 'mariadbd') return 'MariaDB';
    return undefined;
  };
}
