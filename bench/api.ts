/**
 * API under load: the real daemon (`node dist/src/cli.js start`, built first) in a child process
 * with 10,000 connected sites in its database, and a bare Hono route served the same way
 * (@hono/node-server, child process), measured in the same run by autocannon from this process.
 * Sites are inserted directly, with uptime monitoring paused, performance audits off, syncs
 * fresh and scheduled backups off, so nothing but the requests runs. Not run by the tests.
 *
 *   node --import tsx bench/api.ts            # 10 s per scenario
 *   node --import tsx bench/api.ts ticks      # how long each scheduler tick holds the event loop with those sites
 *   BENCH_SECONDS=5 BENCH_SITES=1000 node --import tsx bench/api.ts
 *   BENCH_PROFILE=/tmp/prof node --import tsx bench/api.ts   # and a CPU profile of the daemon
 *   BENCH_ONLY='/api/sites?limit=1' BENCH_PROFILE=/tmp/prof node --import tsx bench/api.ts   # one path alone
 */
import { sqliteStateOf } from '../src/db/state-db.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { DATABASE_FILE } from '../src/main.js';
import { createServices } from '../src/services.js';
import { performanceSettings } from '../src/performance/performance.table.js';
import { systemClock } from '../src/shared/clock.js';
import { createLoggedEvents, createLogger } from '../src/shared/logger.js';
import { siteInventories } from '../src/inventory/inventory.table.js';
import { sites } from '../src/sites/sites.table.js';
import { createTokensRepository } from '../src/tokens/tokens.repository.js';
import { createTokensService } from '../src/tokens/tokens.service.js';
import { uptimeMonitors } from '../src/uptime/uptime.table.js';
import { printSummary, verdict, type SummaryRow } from './support/summary.js';

const ROOT = resolve(import.meta.dirname, '..');
const SITES = Number(process.env.BENCH_SITES ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** 10,000 connected sites as the daemon would have stored them, each with a typical inventory. */
async function seed(dataDir: string): Promise<{ token: string; ids: string[] }> {
  const database = openDatabase(join(dataDir, DATABASE_FILE));
  const now = new Date();
  const plugins = Array.from({ length: 20 }, (_, i) => ({
    slug: `plugin-${i}`,
    file: `plugin-${i}/plugin-${i}.php`,
    name: `Plugin ${i}`,
    version: '1.2.3',
    status: i % 3 ? 'active' : 'inactive',
    update: i % 7 ? null : { version: '1.3.0' },
  }));
  const themes = Array.from({ length: 3 }, (_, i) => ({
    slug: `theme-${i}`,
    name: `Theme ${i}`,
    version: '2.0',
    status: i ? 'inactive' : 'active',
    parent: null,
    update: null,
  }));
  const inventory = { pluginsJson: JSON.stringify(plugins), themesJson: JSON.stringify(themes), syncedAt: now };
  const ids = Array.from({ length: SITES }, (_, i) => `site_bench${String(i).padStart(6, '0')}`);
  database.sqlite.transaction(() => {
    ids.forEach((id, i) => {
      const url = `http://127.0.0.1:9/site-${i}`;
      database.db
        .insert(sites)
        .values({
          id,
          url,
          name: `Site ${i}`,
          restUrl: `${url}/wp-json/`,
          state: 'connected',
          username: 'admin',
          wordpressVersion: '6.8',
          phpVersion: '8.2',
          connectorVersion: '1.0.0',
          lastSyncedAt: now,
          lastSyncAttemptAt: now,
          createdAt: now,
          updatedAt: now,
          connectedAt: now,
        })
        .run();
      database.db
        .insert(siteInventories)
        .values({ siteId: id, ...inventory })
        .run();
      database.db.insert(uptimeMonitors).values({ siteId: id, paused: true, updatedAt: now.getTime() }).run();
      database.db
        .insert(performanceSettings)
        .values({ siteId: id, enabled: false, formFactors: 'mobile', runs: 1 })
        .run();
    });
  })();
  const state = sqliteStateOf(database);
  const tokens = createTokensService({
    repository: createTokensRepository(state),
    clock: systemClock,
    events: createLoggedEvents(createLogger({ level: 'silent' })),
  });
  const { token } = await tokens.create('bench', 'read');
  await state.close();
  return { token, ids };
}

async function waitForHttp(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer`);
}

async function startChild(args: string[], env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitForHttp(readyUrl);
  return child;
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  statuses: Record<string, number>;
}

async function measure(options: autocannon.Options): Promise<Figures> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  const statuses: Record<string, number> = { '2xx': result['2xx'], '4xx': result['4xx'], '5xx': result['5xx'] };
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    statuses,
  };
}

const line = (name: string, f: Figures) =>
  `${name.padEnd(44)} ${f.rps.toFixed(0).padStart(7)} req/s   p50 ${f.p50.toFixed(2).padStart(6)} ms   p99 ${f.p99.toFixed(2).padStart(6)} ms   non-2xx ${f.non2xx}`;

async function main(): Promise<void> {
  if (!process.env.BENCH_NO_BUILD) {
    const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-api-'));
  const seeded = Date.now();
  const { token, ids } = await seed(dataDir);
  console.log(
    `${SITES} sites inserted in ${((Date.now() - seeded) / 1000).toFixed(1)} s; ${SECONDS} s per scenario, ${CONNECTIONS} connections`,
  );

  const [daemonPort, barePort] = await Promise.all([freePort(), freePort()]);
  const daemonEnv = {
    SITEWARDEN_DATA_DIR: dataDir,
    SITEWARDEN_HOST: '127.0.0.1',
    SITEWARDEN_PORT: String(daemonPort),
    SITEWARDEN_LOG_LEVEL: 'warn',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
    SITEWARDEN_AUTH_FAILURES_PER_MINUTE: '30',
  };
  // BENCH_PROFILE=dir: the daemon writes a CPU profile there when it stops.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_PROFILE)] : [];
  const daemon = await startChild(
    [...profile, join(ROOT, 'dist/src/cli.js'), 'start'],
    daemonEnv,
    `http://127.0.0.1:${daemonPort}/healthz`,
  );
  const bare = await startChild(
    [join(ROOT, 'bench/support/api-bare.mjs'), String(barePort), join(dataDir, DATABASE_FILE)],
    {},
    `http://127.0.0.1:${barePort}/`,
  );
  try {
    const api = `http://127.0.0.1:${daemonPort}`;
    const auth = { authorization: `Bearer ${token}` };
    // Warm both up (JIT, SQLite page cache) before measuring.
    await autocannon({ url: `${api}/api/sites`, headers: auth, connections: CONNECTIONS, duration: 2 });
    await autocannon({ url: `http://127.0.0.1:${barePort}/`, connections: CONNECTIONS, duration: 2 });

    if (process.env.BENCH_ONLY) {
      // One path alone (with the token), e.g. to profile it: BENCH_ONLY=/api/sites?limit=1
      console.log(
        line(`GET ${process.env.BENCH_ONLY}`, await measure({ url: `${api}${process.env.BENCH_ONLY}`, headers: auth })),
      );
      return;
    }
    const bareFigures = await measure({ url: `http://127.0.0.1:${barePort}/` });
    const bareList = await measure({ url: `http://127.0.0.1:${barePort}/sites` });
    const bareOne = await measure({
      url: `http://127.0.0.1:${barePort}`,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => ({ ...request, path: `/sites/${ids[Math.floor(Math.random() * ids.length)]}` }),
        },
      ],
    });
    const health = await measure({ url: `${api}/api/health` });
    const small = await measure({ url: `${api}/api/sites?limit=1`, headers: auth });
    const list = await measure({ url: `${api}/api/sites`, headers: auth });
    const one = await measure({
      url: api,
      requests: [
        {
          method: 'GET',
          headers: auth,
          setupRequest: (request) => ({
            ...request,
            path: `/api/sites/${ids[Math.floor(Math.random() * ids.length)]}`,
          }),
        },
      ],
    });

    // A figure of error answers measures the wrong path (a seed the daemon cannot read answered 409 for a while).
    for (const [name, f] of Object.entries({ health, small, list, one, bareList, bareOne }))
      if (f.non2xx > 0) throw new Error(`${name}: ${f.non2xx} answers were not 2xx (${JSON.stringify(f.statuses)})`);

    // A flood of bad tokens from the same address, and a valid client alongside it.
    const flood = autocannon({
      url: `${api}/api/sites`,
      headers: { authorization: 'Bearer swt_not-a-valid-token' },
      connections: CONNECTIONS,
      duration: SECONDS,
    });
    const during = measure({ url: `${api}/api/sites`, headers: auth, connections: 2 });
    const [floodResult, valid] = await Promise.all([flood, during]);
    const alone = await measure({ url: `${api}/api/sites`, headers: auth, connections: 2 });

    console.log(line('bare Hono route, constant answer', bareFigures));
    console.log(line('bare Hono route, same page of 50 from SQLite', bareList));
    console.log(line('bare Hono route, same site + inventory', bareOne));
    console.log(line('GET /api/health (whole stack, no token)', health));
    console.log(line('GET /api/sites?limit=1', small));
    console.log(line(`GET /api/sites (first 50 of ${SITES})`, list));
    console.log(line('GET /api/sites/{id} (random ids)', one));
    console.log(line('valid client, 2 connections, alone', alone));
    console.log(line('valid client, 2 connections, during flood', valid));
    console.log(
      `bad-token flood: ${floodResult.requests.average.toFixed(0)} req/s, statuses ${JSON.stringify(floodResult.statusCodeStats ?? {})}`,
    );
    const ratio = (f: Figures) => (f.rps / bareFigures.rps).toFixed(2);
    console.log(
      `throughput / bare route doing the same reads: list ${(list.rps / bareList.rps).toFixed(2)}, one site ${(one.rps / bareOne.rps).toFixed(2)} (target ≥ 0.5; p99 ≤ 20 ms)`,
    );
    console.log(
      `throughput / constant bare route: health ${ratio(health)}, limit=1 ${ratio(small)}, list ${ratio(list)}, one site ${ratio(one)}`,
    );
    console.log(
      `response sizes: list ${(await (await fetch(`${api}/api/sites`, { headers: auth })).text()).length} bytes, one site ${(await (await fetch(`${api}/api/sites/${ids[0]}`, { headers: auth })).text()).length} bytes`,
    );
    const figures = (f: Figures) => `${f.rps.toFixed(0)} req/s, p99 ${f.p99.toFixed(0)} ms`;
    const against = (f: Figures, base: Figures) => {
      const share = f.rps / base.rps;
      return {
        value: `${figures(f)}: ${share.toFixed(2)} of the baseline`,
        baseline: figures(base),
        target: verdict('≥ 0.5, p99 ≤ 20 ms', share >= 0.5 && f.p99 <= 20),
      };
    };
    printSummary(`api (${SITES} sites, ${SECONDS} s per scenario, ${CONNECTIONS} connections)`, [
      { figure: `GET /api/sites (first 50); baseline: bare route, same reads`, ...against(list, bareList) },
      { figure: 'GET /api/sites/{id}; baseline: bare route, same reads', ...against(one, bareOne) },
      {
        figure: 'GET /api/health; baseline: bare route, constant answer',
        value: `${figures(health)}: ${ratio(health)} of the baseline`,
        baseline: figures(bareFigures),
      },
      {
        figure: 'valid client (2 connections) during a bad-token flood; baseline: alone',
        value: figures(valid),
        baseline: figures(alone),
      },
    ]);
  } finally {
    const stopped = new Promise((done) => daemon.once('exit', done));
    daemon.kill('SIGTERM');
    bare.kill('SIGTERM');
    await stopped;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The daemon's ticks, in-process on the same data: the API waits while one runs. */
async function ticks(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-ticks-'));
  await seed(dataDir);
  const database = openDatabase(join(dataDir, DATABASE_FILE));
  const config = loadConfig({
    SITEWARDEN_DATA_DIR: dataDir,
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
    // The fake fleet is on loopback, which the network boundary refuses unless allowed.
    SITEWARDEN_ALLOWED_NETWORKS: '127.0.0.0/8,::1',
  });
  const logger = createLogger({ level: 'silent' });
  const services = createServices({
    config,
    state: sqliteStateOf(database),
    logger,
    events: createLoggedEvents(logger),
    clock: systemClock,
    secretKey: randomBytes(32),
  });
  await services.uptime.start();
  const all: [string, string, () => unknown][] = [
    [
      'site-sync',
      'every minute',
      async () => (await services.sites.expireAuthorizations(), await services.sync.enqueueDue()),
    ],
    ['uptime-probes', 'every second', () => services.uptime.tick()],
    ['performance-audits', 'every minute', () => services.performance.enqueueDue()],
    ['backups (interval 0: none due)', 'every 10 minutes', () => services.backups.enqueueDue()],
  ];
  console.log(`${SITES} connected sites, monitoring paused, audits off`);
  const rows: SummaryRow[] = [];
  for (const [name, period, tick] of all) {
    await tick();
    const started = performance.now();
    await tick();
    const ms = (performance.now() - started).toFixed(1);
    console.log(`${name.padEnd(32)} ${period.padEnd(17)} ${ms.padStart(8)} ms`);
    rows.push({ figure: `${name} tick (${period})`, value: `${ms} ms` });
  }
  printSummary(`api ticks (${SITES} sites)`, rows);
  await services.uptime.stop();
  database.close();
  rmSync(dataDir, { recursive: true, force: true });
}

await (process.argv[2] === 'ticks' ? ticks() : main());
