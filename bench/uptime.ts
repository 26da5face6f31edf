/**
 * Uptime benchmark: the real monitor (service, scheduler, prober, writer, SQLite file) wired as
 * src/main.ts wires it, probing loopback targets run in a child process, one fresh connection
 * per probe. Not run by the tests. Usage (figures in docs/benchmarks.md):
 *
 *   node --import tsx bench/uptime.ts steady     # 10,000 sites at 60 s for 185 s (measured after the first interval)
 *   node --import tsx bench/uptime.ts capacity   # largest site count at 60 s with p99 lag ≤ 1 s, vs a plain undici loop
 *   node --import tsx bench/uptime.ts storage    # database size per site-day after a simulated year for 1,000 sites
 *   node --import tsx bench/uptime.ts cluster    # steady's sites over two uptime workers on PostgreSQL, against steady
 *   node --import tsx bench/uptime.ts all        # storage, steady and capacity
 *
 * `cluster` (issue 34) alternates rounds of steady's single process on SQLite and of two uptime worker processes
 * sharing a throwaway PostgreSQL (bench/support/uptime-cluster.ts; Debian's postgresql, as the tests use). Its
 * settings: BENCH_SITES (10000), BENCH_INTERVAL seconds (60; a round is three intervals and 5 s, measured
 * after the first), BENCH_ROUNDS (3); BENCH_PROFILE=dir writes a CPU profile of each round's measured span
 * there, the single process's and each worker's (the profiler's cost is then in the figures).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { openDatabase } from '../src/db/database.js';
import { createScheduler } from '../src/jobs/scheduler.js';
import { createId } from '../src/shared/ids.js';
import { createLogger } from '../src/shared/logger.js';
import { sqliteStateOf } from '../src/db/state-db.js';
import { DAY_MS, HOUR_MS, dayStart } from '../src/uptime/rollups.js';
import { DEFAULT_UPTIME_CONFIG } from '../src/uptime/uptime.config.js';
import { createUptimeRepository, type ProbeRow } from '../src/uptime/uptime.repository.js';
import { startCpuProfile } from './support/cpu-profile.js';
import { benchUptimeService } from './support/uptime-service.js';
import { printSummary, verdict, type SummaryRow } from './support/summary.js';
import { runClusterRound, startClusterDatabase, type ClusterRound } from './support/uptime-cluster.js';
import { wholeSetting } from './support/settings.js';

const INTERVAL_S = 60;
const ROOT = resolve(import.meta.dirname, '..');

interface Targets {
  urls(count: number): string[];
  stop(): void;
}

async function freePort(host: string): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** The site mix: 85 % fine, 5 % slow (0.3–1.5 s), 4 % failing (500), 3 % flapping, 2 % refusing, 1 % hanging past the timeout. */
async function startTargets(): Promise<Targets> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/support/uptime-targets.ts')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      cwd: ROOT,
    },
  );
  const line = await new Promise<string>((done) => createInterface({ input: child.stdout! }).once('line', done));
  const { port, addresses } = JSON.parse(line) as { port: number; addresses: string[] };
  const refusedPort = await freePort('127.0.0.1');
  return {
    urls: (count) =>
      Array.from({ length: count }, (_, i) => {
        const host = `${addresses[i % addresses.length]}:${port}`;
        const r = i % 100;
        if (r < 85) return `http://${host}/ok/${i}`;
        if (r < 90) return `http://${host}/slow/${i}`;
        if (r < 94) return `http://${host}/fail/${i}`;
        if (r < 97) return `http://${host}/flap/${i}`;
        if (r < 99) return `http://127.0.0.1:${refusedPort}/refused/${i}`;
        return `http://${host}/hang/${i}`;
      }),
    stop: () => child.stdin!.end(),
  };
}

const writeBytes = () => Number(/write_bytes:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const fmt = (n: number, digits = 2) => n.toFixed(digits);

function insertSites(sqlite: ReturnType<typeof openDatabase>['sqlite'], urls: string[]): void {
  const insert = sqlite.prepare(
    "insert into sites (id, url, rest_url, state, created_at, updated_at, connected_at) values (?, ?, ?, 'connected', ?, ?, ?)",
  );
  const now = Date.now();
  sqlite.transaction(() => {
    for (const url of urls) insert.run(createId('site'), url, `${url}/wp-json/`, now, now, now);
  })();
}

/** Runs the monitor on `urls` (probed every `intervalS`) for `seconds`, measuring from `warmupSeconds` on. */
async function runDaemon(
  urls: string[],
  {
    seconds,
    warmupSeconds,
    concurrency,
    intervalS = INTERVAL_S,
    profile,
  }: {
    seconds: number;
    warmupSeconds: number;
    concurrency: number;
    intervalS?: number;
    /** A .cpuprofile file for the measured span. */
    profile?: string | undefined;
  },
) {
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-'));
  const database = openDatabase(join(dir, 'sitewarden.db'));
  insertSites(database.sqlite, urls);
  const logger = createLogger({ level: 'info', destination: createWriteStream('/dev/null') });
  const lags: number[] = [];
  let measuring = false;
  let warmupProbes = 0;
  const state = sqliteStateOf(database);
  const service = benchUptimeService(state, {
    logger,
    config: { ...DEFAULT_UPTIME_CONFIG, concurrency, defaultIntervalSeconds: intervalS },
    onProbeStart: (lag) => {
      if (measuring) lags.push(lag);
      else warmupProbes++;
    },
  });
  const ioStart = writeBytes();
  await service.start();
  const scheduler = createScheduler({ logger });
  scheduler.every('uptime-probes', '* * * * * *', () => service.tick());
  await scheduler.runAll();

  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 500);
  await sleep(warmupSeconds * 1000);
  const stopProfile = profile ? await startCpuProfile(profile) : undefined;
  measuring = true;
  const cpu0 = process.cpuUsage();
  const io0 = writeBytes();
  const warmupWriteBytesPerProbe = (io0 - ioStart) / warmupProbes;
  const t0 = performance.now();
  await sleep((seconds - warmupSeconds) * 1000);
  measuring = false;
  const cpu = process.cpuUsage(cpu0);
  const written = writeBytes() - io0;
  const elapsed = (performance.now() - t0) / 1000;
  await stopProfile?.();
  clearInterval(sampler);
  await scheduler.stop();
  await service.stop();
  const stored = database.sqlite.prepare('select count(*) as n from uptime_probes').get() as { n: number };
  const events = database.sqlite.prepare('select count(*) as n from downtime_events').get() as { n: number };
  database.close();
  rmSync(dir, { recursive: true, force: true });
  lags.sort((a, b) => a - b);
  const probes = lags.length;
  return {
    sites: urls.length,
    probes,
    probesPerSecond: probes / elapsed,
    p50: quantile(lags, 0.5),
    p99: quantile(lags, 0.99),
    maxLag: lags[lags.length - 1] ?? NaN,
    cpuMsPerProbe: (cpu.user + cpu.system) / 1000 / probes,
    userMsPerProbe: cpu.user / 1000 / probes,
    systemMsPerProbe: cpu.system / 1000 / probes,
    writeBytesPerProbe: written / probes,
    warmupWriteBytesPerProbe,
    peakRss: Math.max(peakRss, process.resourceUsage().maxRSS * 1024),
    storedProbes: stored.n,
    downtimeEvents: events.n,
  };
}

async function steady(targets: Targets) {
  // The first interval is every site's first probe (new sites' statuses written); steady state is measured after it.
  console.log(
    `\n== steady: 10,000 sites at ${INTERVAL_S} s, 185 s run (measured from 65 s, after the first interval), concurrency ${DEFAULT_UPTIME_CONFIG.concurrency} ==`,
  );
  const r = await runDaemon(targets.urls(10_000), {
    seconds: 185,
    warmupSeconds: 65,
    concurrency: DEFAULT_UPTIME_CONFIG.concurrency,
  });
  console.log(
    `probes measured          ${r.probes} (${fmt(r.probesPerSecond, 1)}/s; ${r.storedProbes} stored in the run, ${r.downtimeEvents} downtime events)`,
  );
  console.log(
    `lag due→start            p50 ${fmt(r.p50, 0)} ms, p99 ${fmt(r.p99, 0)} ms, max ${fmt(r.maxLag, 0)} ms   (target p99 ≤ 1000 ms)`,
  );
  console.log(
    `daemon CPU per probe     ${fmt(r.cpuMsPerProbe, 3)} ms (user ${fmt(r.userMsPerProbe, 3)} + sys ${fmt(r.systemMsPerProbe, 3)})   (target ≤ 0.5 ms)`,
  );
  console.log(`peak RSS                 ${fmt(r.peakRss / 2 ** 20, 0)} MB   (target ≤ 300 MB)`);
  console.log(
    `disk writes per probe    ${fmt(r.writeBytesPerProbe, 0)} bytes (/proc/self/io write_bytes)   (target ≤ 1024)`,
  );
  console.log(
    `  first interval         ${fmt(r.warmupWriteBytesPerProbe, 0)} bytes per probe (10,000 new sites: each first status written once)`,
  );
  summary.push(
    {
      figure: `steady, 10,000 sites at ${INTERVAL_S} s: lag due → start`,
      value: `p99 ${fmt(r.p99, 0)} ms`,
      target: verdict('p99 ≤ 1 s', r.p99 <= 1000),
    },
    {
      figure: 'steady: daemon CPU per probe',
      value: `${fmt(r.cpuMsPerProbe, 3)} ms`,
      target: verdict('≤ 0.5 ms', r.cpuMsPerProbe <= 0.5),
    },
    {
      figure: 'steady: peak RSS',
      value: `${fmt(r.peakRss / 2 ** 20, 0)} MB`,
      target: verdict('≤ 300 MB', r.peakRss <= 300 * 2 ** 20),
    },
    {
      figure: 'steady: disk writes per probe',
      value: `${fmt(r.writeBytesPerProbe, 0)} bytes`,
      target: verdict('≤ 1 KB', r.writeBytesPerProbe <= 1024),
    },
  );
}

/** A plain undici loop over the same URLs at the same concurrency, fresh connection per request. */
async function plainUndiciRate(urls: string[], concurrency: number, seconds: number): Promise<number> {
  const agent = new Agent({ pipelining: 0 });
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const url = urls[next++ % urls.length]!;
      try {
        const response = await request(url, {
          dispatcher: agent,
          signal: AbortSignal.timeout(DEFAULT_UPTIME_CONFIG.defaultTimeoutMs),
        });
        await response.body.dump({ limit: DEFAULT_UPTIME_CONFIG.maxBodyBytes });
      } catch {
        // failures count as requests made, as they do for the monitor
      }
      if (performance.now() < end) done++;
    }
  };
  const workers = Promise.all(Array.from({ length: concurrency }, worker));
  await sleep(seconds * 1000);
  const rate = done / seconds;
  await Promise.race([workers, sleep(DEFAULT_UPTIME_CONFIG.defaultTimeoutMs + 1000)]);
  await agent.destroy();
  return rate;
}

async function capacity(targets: Targets) {
  const concurrency = 512;
  console.log(
    `\n== capacity: sites at ${INTERVAL_S} s until p99 lag > 1 s (each step 35 s, measured from 10 s), concurrency ${concurrency} ==`,
  );
  let best: Awaited<ReturnType<typeof runDaemon>> | undefined;
  for (let sites = 40_000, step = 0; step < 6; step++, sites = Math.round(sites * 1.3)) {
    const r = await runDaemon(targets.urls(sites), { seconds: 35, warmupSeconds: 10, concurrency });
    const holds = r.p99 <= 1000;
    console.log(
      `${String(sites).padStart(7)} sites: ${fmt(r.probesPerSecond, 0)} probes/s, lag p99 ${fmt(r.p99, 0)} ms, CPU ${fmt(r.cpuMsPerProbe, 3)} ms/probe, RSS ${fmt(r.peakRss / 2 ** 20, 0)} MB → ${holds ? 'holds' : 'falls behind'}`,
    );
    if (!holds) break;
    best = r;
    await sleep(2000);
  }
  const baseline = await plainUndiciRate(targets.urls(best?.sites ?? 40_000), concurrency, 20);
  console.log(`plain undici loop        ${fmt(baseline, 0)} requests/s (same URLs, same concurrency, no keep-alive)`);
  if (best) {
    const rate = best.sites / INTERVAL_S;
    console.log(
      `largest site count held  ${best.sites} sites at ${INTERVAL_S} s = ${fmt(rate, 0)} probes/s; ratio to the plain loop ${fmt(rate / baseline)}   (aim ≥ 0.5)`,
    );
  } else {
    console.log('largest site count held  below 40,000');
  }
  const rate = best ? best.sites / INTERVAL_S : 0;
  summary.push({
    figure: `capacity: probes/s at the largest site count held at ${INTERVAL_S} s; baseline: a plain undici loop`,
    value: best ? `${best.sites} sites, ${fmt(rate, 0)} probes/s, ${fmt(rate / baseline)}×` : 'below 40,000 sites',
    baseline: `${fmt(baseline, 0)} requests/s`,
    target: verdict('≥ 0.5×', rate / baseline >= 0.5),
  });
}

/** Writes a year of history for 1,000 sites through the real roll-up and pruning code, then measures the file. */
async function storage() {
  const sites = 1000;
  console.log(
    `\n== storage: ${sites} sites, a simulated year at ${INTERVAL_S} s with the default retention (raw ${DEFAULT_UPTIME_CONFIG.rawRetentionHours} h, hourly ${DEFAULT_UPTIME_CONFIG.hourlyRetentionDays} d, daily ${DEFAULT_UPTIME_CONFIG.dailyRetentionDays} d) ==`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-'));
  const file = join(dir, 'sitewarden.db');
  const database = openDatabase(file);
  const ids: string[] = [];
  const now = Date.now();
  database.sqlite.transaction(() => {
    const insert = database.sqlite.prepare(
      "insert into sites (id, url, rest_url, state, created_at, updated_at) values (?, ?, ?, 'connected', ?, ?)",
    );
    for (let i = 0; i < sites; i++) {
      const id = createId('site');
      ids.push(id);
      insert.run(id, `https://site-${i}.example`, `https://site-${i}.example/wp-json/`, now, now);
    }
  })();
  const repository = createUptimeRepository(sqliteStateOf(database));
  await repository.connectedSites(now);
  const yearStart = dayStart(now - 365 * DAY_MS);
  const response = (i: number, h: number) => 80 + ((i * 7 + h * 13) % 400);
  const started = performance.now();
  // Every closed hour of the year, as the monitor writes it; each day rolled up and pruned as the daily job does.
  for (let day = yearStart; day < dayStart(now); day += DAY_MS) {
    const rows = [];
    for (let h = 0; h < 24; h++) {
      for (let i = 0; i < sites; i++) {
        const down = (i + h + day / DAY_MS) % 500 === 0 ? 3 : 0;
        const r = response(i, h);
        rows.push({
          siteId: ids[i]!,
          bucket: day + h * HOUR_MS,
          up: 60 - down,
          down,
          responseSum: r * (60 - down),
          responseCount: 60 - down,
          responseMin: r - 40,
          responseMax: r + 300,
        });
      }
    }
    await repository.addHourly(rows, day + DAY_MS);
    await repository.rollupDay(day, day + DAY_MS);
    await repository.pruneRollups(
      day - DEFAULT_UPTIME_CONFIG.hourlyRetentionDays * DAY_MS,
      day - DEFAULT_UPTIME_CONFIG.dailyRetentionDays * DAY_MS,
    );
    // About one outage per site a fortnight.
    if ((day / DAY_MS) % 14 === 0)
      for (const siteId of ids)
        await repository.recordTransition(siteId, {
          status: 'down',
          since: day + 3 * HOUR_MS,
          open: { startedAt: day + 3 * HOUR_MS, cause: 'timeout' },
        });
    if ((day / DAY_MS) % 14 === 0)
      for (const siteId of ids)
        await repository.recordTransition(siteId, {
          status: 'up',
          since: day + 4 * HOUR_MS,
          closeAt: day + 4 * HOUR_MS,
        });
  }
  // The raw window at its fullest: retention plus the hour before the next prune.
  const rawFrom = now - (DEFAULT_UPTIME_CONFIG.rawRetentionHours + 1) * HOUR_MS;
  for (let at = rawFrom; at < now; at += INTERVAL_S * 1000) {
    const rows: ProbeRow[] = ids.map((siteId, i) => ({
      siteId,
      at: at + i * 60,
      up: true,
      httpStatus: 200,
      responseMs: response(i, at % 24),
      cause: null,
      certificateExpiresAt: Date.parse('2027-01-01T00:00:00Z'),
    }));
    await repository.insertProbes(rows);
  }
  database.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = database.sqlite.pragma('page_size', { simple: true }) as number;
  const pages = database.sqlite.pragma('page_count', { simple: true }) as number;
  const free = database.sqlite.pragma('freelist_count', { simple: true }) as number;
  const counts = Object.fromEntries(
    ['uptime_probes', 'uptime_hourly', 'uptime_daily', 'downtime_events'].map((table) => [
      table,
      (database.sqlite.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n,
    ]),
  );
  database.close();
  const fileBytes = statSync(file).size;
  rmSync(dir, { recursive: true, force: true });
  const siteDays = sites * 365;
  console.log(
    `rows                     ${JSON.stringify(counts)} (simulated in ${fmt((performance.now() - started) / 1000, 0)} s)`,
  );
  console.log(
    `database file            ${fmt(fileBytes / 2 ** 20, 1)} MB (${pages} pages of ${pageSize} B, ${free} free)`,
  );
  console.log(
    `per site-day             ${fmt(fileBytes / siteDays, 0)} bytes (file size / ${siteDays} site-days)   (aim ≤ 2048)`,
  );
  summary.push({
    figure: 'storage: database bytes per site-day, a simulated year',
    value: `${fmt(fileBytes / siteDays, 0)} bytes`,
    target: verdict('≤ 2 KB', fileBytes / siteDays <= 2048),
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const list = (values: number[], digits: number) => values.map((value) => fmt(value, digits)).join(', ');

/** A cluster round's figures over all its workers: lags together, CPU summed. */
function clusterFigures(round: ClusterRound) {
  const lags = round.workers.flatMap((worker) => worker.lags).sort((a, b) => a - b);
  const probes = lags.length;
  const workersCpuMs = round.workers.reduce((sum, { cpu }) => sum + (cpu.user + cpu.system) / 1000, 0);
  return {
    probes,
    p50: quantile(lags, 0.5),
    p99: quantile(lags, 0.99),
    maxLag: lags[lags.length - 1] ?? NaN,
    workersCpuMsPerProbe: workersCpuMs / probes,
    postgresCpuMsPerProbe: round.postgresCpuMs / probes,
  };
}

/**
 * Cluster mode (issue 34): steady's sites over two uptime workers, each a process of its own, sharing a
 * PostgreSQL database, against steady's single process on SQLite in the same run, rounds alternating.
 * The CPU a probe is the workers' summed, and PostgreSQL's (all its processes) beside it.
 */
async function cluster(targets: Targets) {
  const sites = wholeSetting('BENCH_SITES', 10_000);
  const intervalS = wholeSetting('BENCH_INTERVAL', INTERVAL_S);
  const rounds = wholeSetting('BENCH_ROUNDS', 3);
  const workers = 2;
  const span = { seconds: 3 * intervalS + 5, warmupSeconds: intervalS + 5 };
  const config = { ...DEFAULT_UPTIME_CONFIG, defaultIntervalSeconds: intervalS };
  console.log(
    `\n== cluster: ${sites} sites at ${intervalS} s over ${workers} uptime workers on PostgreSQL, against one process on SQLite; ${rounds} rounds alternating, each ${span.seconds} s measured from ${span.warmupSeconds} s ==`,
  );
  const urls = targets.urls(sites);
  const profiles = process.env.BENCH_PROFILE && resolve(process.env.BENCH_PROFILE);
  if (profiles) mkdirSync(profiles, { recursive: true });
  const database = await startClusterDatabase();
  const single: Awaited<ReturnType<typeof runDaemon>>[] = [];
  const clustered: ReturnType<typeof clusterFigures>[] = [];
  const slots = { slots: 0, doubled: 0, missed: 0, overlapped: 0 };
  try {
    for (let round = 1; round <= rounds; round++) {
      const s = await runDaemon(urls, {
        ...span,
        concurrency: config.concurrency,
        intervalS,
        profile: profiles && join(profiles, `round-${round}-single.cpuprofile`),
      });
      single.push(s);
      console.log(
        `round ${round}, one process   ${s.probes} probes, lag p50 ${fmt(s.p50, 0)} ms, p99 ${fmt(s.p99, 0)} ms, max ${fmt(s.maxLag, 0)} ms; CPU ${fmt(s.cpuMsPerProbe, 3)} ms a probe; load ${fmt(loadavg()[0]!, 1)}`,
      );
      const measured = await runClusterRound(database, urls, {
        workers,
        config,
        ...span,
        profile: profiles && join(profiles, `round-${round}-cluster`),
      });
      const c = clusterFigures(measured);
      clustered.push(c);
      const { slots: due, once, doubled, missed, overlapped, rechecks } = measured.slots;
      slots.slots += due;
      slots.doubled += doubled;
      slots.missed += missed;
      slots.overlapped += overlapped;
      console.log(
        `round ${round}, cluster       ${c.probes} probes (${measured.workers.map((w) => w.lags.length).join(' + ')}), lag p50 ${fmt(c.p50, 0)} ms, p99 ${fmt(c.p99, 0)} ms, max ${fmt(c.maxLag, 0)} ms; CPU a probe: workers ${fmt(c.workersCpuMsPerProbe, 3)} ms, PostgreSQL ${fmt(c.postgresCpuMsPerProbe, 3)} ms; load ${fmt(loadavg()[0]!, 1)}`,
      );
      console.log(
        `  slots due              ${due}: ${once} probed once, ${doubled} more than once, ${missed} not at all, ${overlapped} while a re-check ran (${rechecks} re-checks between slots); workers' peak RSS ${measured.workers.map((w) => fmt(w.peakRss / 2 ** 20, 0)).join(' and ')} MB`,
      );
    }
  } finally {
    await database.stop();
  }

  const ratios = clustered.map((c, i) => c.workersCpuMsPerProbe / single[i]!.cpuMsPerProbe);
  const totalRatios = clustered.map(
    (c, i) => (c.workersCpuMsPerProbe + c.postgresCpuMsPerProbe) / single[i]!.cpuMsPerProbe,
  );
  const p99 = median(clustered.map((c) => c.p99));
  const workersCpu = clustered.map((c) => c.workersCpuMsPerProbe);
  const postgresCpu = clustered.map((c) => c.postgresCpuMsPerProbe);
  const singleCpu = single.map((s) => s.cpuMsPerProbe);
  const singleCpuText = `one process: ${fmt(median(singleCpu), 3)} ms (${list(singleCpu, 3)})`;
  summary.push(
    {
      figure: `cluster, ${sites} sites at ${intervalS} s over ${workers} workers: lag due → start (median of ${rounds} rounds)`,
      value: `p99 ${fmt(p99, 0)} ms (${list(
        clustered.map((c) => c.p99),
        0,
      )})`,
      baseline: `one process: p99 ${fmt(median(single.map((s) => s.p99)), 0)} ms`,
      target: verdict('p99 ≤ 1 s', p99 <= 1000),
    },
    {
      figure: "cluster: the workers' CPU per probe, both summed",
      value: `${fmt(median(workersCpu), 3)} ms (${list(workersCpu, 3)}), ${fmt(median(ratios))}× (${list(ratios, 2)})`,
      baseline: singleCpuText,
      target: verdict('≤ 1.5×', median(ratios) <= 1.5),
    },
    {
      figure: "cluster: the workers' and PostgreSQL's CPU per probe",
      value: `${fmt(median(workersCpu) + median(postgresCpu), 3)} ms (PostgreSQL ${list(postgresCpu, 3)}), ${fmt(median(totalRatios))}× (${list(totalRatios, 2)})`,
      baseline: singleCpuText,
      target: verdict('≤ 1.5×', median(totalRatios) <= 1.5),
    },
    {
      figure: 'cluster: each slot probed once (the probes written, per site and interval)',
      value: `${slots.slots} slots: ${slots.doubled} more than once, ${slots.missed} not at all, ${slots.overlapped} while a re-check ran`,
      target: verdict('no doubles, no gaps', slots.doubled === 0 && slots.missed === 0),
    },
  );
}

/** Each mode's figures, for the summary table at the end. */
const summary: SummaryRow[] = [];

async function main() {
  // tsx turns source maps on; the daemon runs compiled code without them, and rewriting every
  // error's stack through source maps would bill the monitor for the benchmark's convenience.
  process.setSourceMapsEnabled(false);
  const mode = process.argv[2] ?? 'all';
  if (!['steady', 'capacity', 'storage', 'cluster', 'all'].includes(mode))
    throw new Error(`unknown mode ${mode}: steady, capacity, storage, cluster or all`);
  console.log(`uptime benchmark (${mode}); node ${process.version}; loopback targets only`);
  if (mode === 'storage' || mode === 'all') await storage();
  if (mode !== 'storage') {
    const targets = await startTargets();
    try {
      if (mode === 'steady' || mode === 'all') await steady(targets);
      if (mode === 'capacity' || mode === 'all') await capacity(targets);
      if (mode === 'cluster') await cluster(targets);
    } finally {
      targets.stop();
    }
  }
  printSummary(`uptime ${mode}`, summary);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
