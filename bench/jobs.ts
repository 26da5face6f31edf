/**
 * Jobs benchmark (issue 34): backups per hour and audits per hour in cluster mode with one worker and with two,
 * each worker a process of its own, against the single machine's daemon on SQLite doing the same work, in the
 * same run. BENCH_SITES real WordPress test sites (bench/support/jobs-sites.ts: each its own `php -S` and
 * database, with BENCH_MEDIA_MB MiB of media of its own); each arm queues one backup (or one Lighthouse audit)
 * per site through the API and times them to the last one's end (bench/support/jobs-cluster.ts). Arms alternate
 * within a round, their order reversed every other round; the figures are medians over BENCH_ROUNDS rounds.
 *
 * The CPU each job costs is read per role: the API process, the workers (or the one process), the audit workers'
 * Lighthouse and its Chromium, the sites' PHP and MariaDB, and PostgreSQL (all its processes). Everything shares
 * this machine's cores, so two workers do not double the throughput when the sites or Chromium already fill them:
 * the CPU a job, by role, tells what N machines would carry. A worker runs SITEWARDEN_BACKUP_CONCURRENCY (2)
 * backups and SITEWARDEN_PERFORMANCE_CONCURRENCY (1) audit at once, as in production.
 *
 *   npm run bench -- jobs cluster
 *   BENCH_SITES=8 BENCH_MEDIA_MB=64 BENCH_ROUNDS=5 BENCH_KINDS=backups BENCH_SINGLE=0 npm run bench -- jobs cluster
 */
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { runJobsArm, MAX_JOBS, type ArmResult, type JobsKind } from './support/jobs-cluster.js';
import { startJobSites } from './support/jobs-sites.js';
import { printSummary, type SummaryRow } from './support/summary.js';
import { startClusterDatabase } from './support/uptime-cluster.js';
import { wholeSetting } from './support/settings.js';

const ROOT = resolve(import.meta.dirname, '..');
const KINDS: readonly JobsKind[] = ['backups', 'audits'];
/** The roles a job's CPU is read by, in the order printed (jobs-cluster.ts's labels, the workers summed). */
const ROLES = ['api', 'workers', 'one process', 'audit workers', 'Chromium', 'PHP', 'MariaDB', 'PostgreSQL'];

function kindsSetting(): JobsKind[] {
  const raw = process.env.BENCH_KINDS || KINDS.join(',');
  const kinds = raw.split(',').map((kind) => kind.trim());
  const unknown = kinds.find((kind) => !(KINDS as readonly string[]).includes(kind));
  if (unknown !== undefined) throw new Error(`BENCH_KINDS: ${unknown} is not one of ${KINDS.join(', ')}`);
  return kinds as JobsKind[];
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const list = (values: number[], digits: number) => values.map((value) => fmt(value, digits)).join(', ');
const perHour = (arm: ArmResult) => (arm.jobs / arm.wallMs) * 3_600_000;
const mib = (bytes: number) => fmt(bytes / 2 ** 20, 1);
/** A backup arm's sizes, a job's average: the site's files, downloaded, added to the store. */
const bytesText = ({ bytes, jobs }: ArmResult) =>
  bytes
    ? `; a backup: ${mib(bytes.total / jobs)} MiB of files, ${mib(bytes.transferred / jobs)} downloaded, ${mib(bytes.stored / jobs)} stored`
    : '';

/** CPU seconds a job by role (the workers summed), from an arm's CPU by process. */
function cpuPerJob(arm: ArmResult): Map<string, number> {
  const byRole = new Map<string, number>();
  for (const [label, ms] of arm.cpuMs) {
    const role = label.startsWith('worker ') ? 'workers' : label;
    byRole.set(role, (byRole.get(role) ?? 0) + ms / 1000 / arm.jobs);
  }
  return byRole;
}

/** The share of the machine's cores the arm's processes kept busy over its wall time. */
const coresBusy = (arm: ArmResult) =>
  [...arm.cpuMs.values()].reduce((sum, ms) => sum + ms, 0) / arm.wallMs / cpus().length;

const cpuText = (byRole: Map<string, number>) =>
  ROLES.filter((role) => byRole.has(role))
    .map((role) => `${role} ${fmt(byRole.get(role)!)}`)
    .join(', ');

const armName = (workers: number) =>
  workers === 0 ? 'one process on SQLite' : `${workers} worker${workers > 1 ? 's' : ''}`;

/** The arms' figures of one kind over the rounds: by worker count (0: one process on SQLite). */
type Measured = Map<number, ArmResult[]>;

function summaryRows(kind: JobsKind, measured: Measured, sites: number, rounds: number): SummaryRow[] {
  const of = (workers: number) => measured.get(workers) ?? [];
  const rates = (workers: number) => of(workers).map(perHour);
  const ratios = of(2).map((two, i) => perHour(two) / perHour(of(1)[i]!));
  const single = of(0).length > 0 ? `one process on SQLite: ${fmt(median(rates(0)), 0)}/h (${list(rates(0), 0)})` : '';
  /** The median over the rounds of each role's CPU a job. */
  const medianCpu = (workers: number) => {
    const each = of(workers).map(cpuPerJob);
    const roles = ROLES.filter((role) => each.some((byRole) => byRole.has(role)));
    return new Map(roles.map((role) => [role, median(each.map((byRole) => byRole.get(role) ?? 0))]));
  };
  const busy = (workers: number) => `cores busy ${list(of(workers).map(coresBusy), 2)}`;
  return [
    {
      figure: `${kind} per hour, ${sites} sites, one worker (median of ${rounds} rounds)`,
      value: `${fmt(median(rates(1)), 0)}/h (${list(rates(1), 0)})`,
      baseline: single,
    },
    {
      figure: `${kind} per hour, two workers; the ratio to one worker, round by round`,
      value: `${fmt(median(rates(2)), 0)}/h (${list(rates(2), 0)}), ${fmt(median(ratios))}× (${list(ratios, 2)})`,
      baseline: single,
    },
    ...[1, 2, 0]
      .filter((workers) => of(workers).length > 0)
      .map((workers) => ({
        figure: `${kind}: CPU seconds a job by role, ${armName(workers)} (medians); ${busy(workers)} of ${cpus().length}`,
        value: cpuText(medianCpu(workers)),
      })),
  ];
}

async function main() {
  const mode = process.argv[2] ?? 'cluster';
  if (mode !== 'cluster') throw new Error(`unknown mode ${mode}: cluster`);
  if (!existsSync(join(ROOT, 'dist/src/cli.js'))) throw new Error('run `npm run build` first');
  const siteCount = wholeSetting('BENCH_SITES', 4);
  if (siteCount > MAX_JOBS) throw new Error(`BENCH_SITES must be at most ${MAX_JOBS}`);
  const mediaMb = wholeSetting('BENCH_MEDIA_MB', 16);
  const rounds = wholeSetting('BENCH_ROUNDS', 3);
  const kinds = kindsSetting();
  const arms = process.env.BENCH_SINGLE === '0' ? [1, 2] : [1, 2, 0];
  console.log(
    `jobs benchmark (cluster): ${kinds.join(' and ')} of ${siteCount} sites (${mediaMb} MiB of media each) by one worker, two workers${arms.includes(0) ? ' and one process on SQLite' : ''}; ${rounds} rounds; node ${process.version}; loopback only`,
  );
  const started = performance.now();
  const sites = await startJobSites(siteCount, mediaMb);
  console.log(`${siteCount} sites made in ${fmt((performance.now() - started) / 1000, 0)} s`);
  const database = await startClusterDatabase();
  const measured = new Map<JobsKind, Measured>(kinds.map((kind) => [kind, new Map()]));
  const loads: number[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const kind of kinds) {
        for (const workers of round % 2 === 1 ? arms : [...arms].reverse()) {
          const arm = await runJobsArm(kind, workers, sites.sites, database);
          const byWorkers = measured.get(kind)!;
          byWorkers.set(workers, [...(byWorkers.get(workers) ?? []), arm]);
          loads.push(loadavg()[0]!);
          console.log(
            `round ${round}, ${kind}, ${armName(workers)}: ${arm.jobs}${workers > 1 ? ` (${arm.perWorker.join(' + ')})` : ''} in ${fmt(arm.wallMs / 1000, 1)} s = ${fmt(perHour(arm), 0)}/h; a job ran ${fmt(median(arm.runMs) / 1000, 1)} s (median) after ${fmt(median(arm.waitMs) / 1000, 1)} s queued; CPU s a job: ${cpuText(cpuPerJob(arm))}; cores busy ${fmt(coresBusy(arm))}${bytesText(arm)}; load ${fmt(loads.at(-1)!, 1)}`,
          );
        }
      }
    }
  } finally {
    await database.stop();
    await sites.stop();
  }
  console.log(
    `load average (1 min) at the arms' ends: ${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)}; /proc/loadavg now: ${loadavg()
      .map((load) => fmt(load, 2))
      .join(' ')}`,
  );
  printSummary(
    `jobs cluster (${siteCount} sites, ${mediaMb} MiB of media each, ${rounds} rounds)`,
    kinds.flatMap((kind) => summaryRows(kind, measured.get(kind)!, siteCount, rounds)),
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
