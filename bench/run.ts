/**
 * `npm run bench` lists the suites; `npm run bench -- NAME [ARGS…]` runs one. A suite measures the
 * daemon against a baseline doing the same work in the same run and ends with one summary table
 * (bench/support/summary.ts, Markdown). Current figures: docs/benchmarks.md. Settings are BENCH_*
 * environment variables (each suite's header lists its own); node flags go in NODE_OPTIONS;
 * ARGS go to the suite. Probes and one-off experiments are in bench/lab/, run by path.
 *
 * None runs in the tests, and most take minutes and both cores: run them on a quiet machine.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

interface Suite {
  /** What it measures, against which baseline. */
  measures: string;
  /** Runs `npm run build` first: the suite runs the built daemon (`dist/`). */
  build?: boolean;
  /** Node flags the suite wants. */
  node?: string[];
  /** Its arguments, for the listing. */
  args?: string;
}

const SUITES: Record<string, Suite> = {
  api: {
    measures: 'the API under load (10,000 sites) against a bare Hono server doing the same reads (builds itself)',
    args: '[ticks]',
  },
  backups: {
    measures: 'backup, second backup, 30 daily backups, restore, RSS against tar czf + mysqldump and the first backup',
    build: true,
  },
  'bulk-machinery': {
    measures: "a bulk update's CPU per site update, network left out, against the daemon's own client alone",
    build: true,
    node: ['--expose-gc'],
  },
  'bulk-updates': {
    measures: "a bulk update's CPU and time per site update against calling the connector directly",
    build: true,
    node: ['--expose-gc'],
  },
  dashboard: {
    measures: "the fleet overview's server time against GET /api/sites, and Lighthouse on it (10,000 sites)",
  },
  'inventory-refresh': {
    measures: 'the inventory sync of 10,000 sites against the same GETs by fetch, nothing checked or stored',
  },
  jobs: {
    measures:
      'backups and audits per hour in a cluster, one worker and two (each a process), against one process on SQLite',
    build: true,
    args: '[cluster]',
  },
  overload: {
    measures: 'API latency while 200 browsers load the overview, overload shedding on against off (10,000 sites)',
  },
  offsite: {
    measures: "the offsite copy's throughput against the bare S3 SDK, sealing's CPU share, RSS",
    build: true,
  },
  performance: {
    measures: "Lighthouse audits through the daemon against Lighthouse's own CLI; event loop, API latency, RSS",
    build: true,
  },
  'safe-updates': {
    measures: 'a safe update against a plain one, its restore point against a full backup, healing a fatal update',
  },
  'sign-in': {
    measures: 'API p99 while 120 wrong passwords arrive at once, again and again, against the same API with none',
  },
  'tls-connections': {
    measures: "CPU per new HTTPS connection: the daemon's shared TLS context against one per connection",
  },
  uptime: {
    measures:
      'the uptime monitor: lag, CPU, writes, RSS; capacity against a plain undici loop; storage; two cluster workers against one process',
    args: '[steady|capacity|storage|cluster|all]',
  },
};

const ROOT = join(import.meta.dirname, '..');

function list(): string {
  const width = Math.max(...Object.keys(SUITES).map((name) => name.length));
  return [
    'npm run bench -- NAME [ARGS…]   (figures and commands: docs/benchmarks.md)',
    '',
    ...Object.entries(SUITES).map(
      ([name, suite]) =>
        `  ${name.padEnd(width)}  ${suite.measures}${suite.args ? `; args ${suite.args}` : ''}${suite.build ? ' (builds first)' : ''}`,
    ),
  ].join('\n');
}

function run(name: string, args: string[]): number {
  const suite = SUITES[name]!;
  if (suite.build && process.env.BENCH_BUILD !== '0') {
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) return build.status ?? 1;
  }
  const ran = spawnSync(
    process.execPath,
    [...(suite.node ?? []), '--import', 'tsx', join(ROOT, 'bench', `${name}.ts`), ...args],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (ran.error) console.error(`${name} could not be started: ${ran.error.message}`);
  return ran.status ?? 1;
}

const [name, ...args] = process.argv.slice(2);
if (!name) {
  console.log(list());
} else if (!Object.hasOwn(SUITES, name)) {
  console.error(`no suite ${name}\n\n${list()}`);
  process.exitCode = 2;
} else {
  process.exitCode = run(name, args);
}
