/**
 * Dashboard benchmark: seeds 10,000 sites (uptime roll-ups, inventories with pending updates,
 * Lighthouse history, backups, tags) into the real app on an in-memory database, then
 *  1. times the fleet overview's server work per page (app.request(), signed in) over a mix of
 *     pages, sorts, filters and searches, beside GET /api/sites as a baseline;
 *  2. serves the app on loopback and audits the signed-in overview with the project's own
 *     Lighthouse (the version in package.json, the daemon's Chromium flags), mobile and desktop.
 * Prints the figures; nothing is asserted. Usage (figures in docs/benchmarks.md):
 *
 *   node --import tsx bench/dashboard.ts                      # 10,000 sites, 300 timed pages
 *   BENCH_SITES=2000 BENCH_REQUESTS=100 BENCH_LIGHTHOUSE=0 node --import tsx bench/dashboard.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse, { desktopConfig } from 'lighthouse';
import { chromeFlags } from '../src/performance/chrome-flags.js';
import { createTestApp } from '../test/support/test-app.js';
import { seedFleet } from './support/fleet-seed.js';
import { printSummary, verdict } from './support/summary.js';

const SITES = Number(process.env.BENCH_SITES ?? 10_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const RUN_LIGHTHOUSE = process.env.BENCH_LIGHTHOUSE !== '0';
const PASSWORD = 'benchmark password 0123';
const HOUR = 3_600_000;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;

function seed(t: ReturnType<typeof createTestApp>) {
  return seedFleet(t.database.sqlite, SITES);
}

/** Every sort the overview offers (overviewSorts). */
const SORTS = ['name', 'status', 'uptime24h', 'uptime30d', 'response', 'score', 'updates', 'backup', 'backupAge'];

/** A mix of what people click: pages deep into the fleet, each sort both ways, filters, searches. */
function overviewPaths(count: number): string[] {
  const pages = Math.ceil(SITES / 50);
  const variants = [
    (n: number) => `/?page=${1 + ((n * 37) % pages)}`,
    (n: number) => `/?sort=${SORTS[n % SORTS.length]}&dir=${n % 2 ? 'desc' : 'asc'}&page=${1 + ((n * 7) % pages)}`,
    (n: number) => `/?tag=client-${n % 400}`,
    (n: number) => `/?tag=woocommerce&page=${1 + (n % 40)}`,
    () => '/?updates=1&sort=score',
    () => '/?backup=failed',
    (n: number) => `/?status=${['down', 'degraded', 'up'][n % 3]}&sort=${SORTS[n % SORTS.length]}`,
    (n: number) => `/?q=site-${n % 1000}`,
  ];
  return Array.from({ length: count }, (_, n) => variants[n % variants.length]!(n));
}

async function time(
  label: string,
  paths: string[],
  request: (path: string) => Response | Promise<Response>,
  breakdown = false,
) {
  for (const path of paths.slice(0, 10)) await (await request(path)).text(); // warm the statement cache
  const samples: number[] = [];
  // CPU time per request too: on this shared machine wall time includes waiting for a core.
  const cpuSamples: number[] = [];
  let bytes = 0;
  for (const path of paths) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const response = await request(path);
    const body = await response.text();
    samples.push(performance.now() - started);
    const cpu = process.cpuUsage(cpuStarted);
    cpuSamples.push((cpu.user + cpu.system) / 1000);
    bytes += body.length;
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
  }
  if (breakdown) {
    // By filter (whatever the sort), else by sort.
    const groups = new Map<string, number[][]>();
    paths.forEach((path, i) => {
      const params = [...new URLSearchParams(path.split('?')[1] ?? '')];
      const filters = params.map(([k]) => k).filter((k) => !['sort', 'dir', 'page'].includes(k));
      const sort = params.find(([k]) => k === 'sort')?.[1];
      const key = filters.length ? filters.join('&') : sort ? `sort=${sort}` : 'page';
      const [wall = [], cpu = []] = groups.get(key) ?? [];
      groups.set(key, [
        [...wall, samples[i]!],
        [...cpu, cpuSamples[i]!],
      ]);
    });
    for (const [key, [wall = [], cpu = []]] of groups)
      console.log(
        `  ${key}: p50 ${ms(percentile(wall, 50))}, p99 ${ms(percentile(wall, 99))}; cpu p50 ${ms(percentile(cpu, 50))}, p99 ${ms(percentile(cpu, 99))} (${wall.length})`,
      );
  }
  console.log(
    `${label}: ${samples.length} requests, p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}, max ${ms(Math.max(...samples))}; cpu p50 ${ms(percentile(cpuSamples, 50))}, p99 ${ms(percentile(cpuSamples, 99))}; mean page ${(bytes / samples.length / 1024).toFixed(1)} KiB`,
  );
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function audit(url: string, cookie: string, formFactor: 'mobile' | 'desktop') {
  const profile = mkdtempSync(join(tmpdir(), 'sitewarden-bench-lh-'));
  const chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    userDataDir: profile,
    chromeFlags: chromeFlags({
      auditedHost: '127.0.0.1',
      runningAsRoot: process.getuid?.() === 0,
      blockThirdParty: true,
    }),
    logLevel: 'silent',
  });
  try {
    const result = await lighthouse(
      url,
      {
        port: chrome.port,
        logLevel: 'error',
        extraHeaders: { Cookie: cookie },
        onlyCategories: ['performance', 'accessibility', 'best-practices'],
        disableFullPageScreenshot: true,
      },
      formFactor === 'desktop' ? desktopConfig : undefined,
    );
    const lhr = result!.lhr;
    const score = (id: string) => Math.round((lhr.categories[id]?.score ?? 0) * 100);
    const failing = Object.values(lhr.audits)
      .filter((a) => a.score !== null && a.score < 1 && a.scoreDisplayMode === 'binary')
      .map((a) => a.id);
    console.log(
      `lighthouse ${lhr.lighthouseVersion} ${formFactor}: performance ${score('performance')}, accessibility ${score('accessibility')}, best practices ${score('best-practices')}, ` +
        `FCP ${Math.round(lhr.audits['first-contentful-paint']?.numericValue ?? NaN)} ms, LCP ${Math.round(lhr.audits['largest-contentful-paint']?.numericValue ?? NaN)} ms, ` +
        `TBT ${Math.round(lhr.audits['total-blocking-time']?.numericValue ?? NaN)} ms, CLS ${(lhr.audits['cumulative-layout-shift']?.numericValue ?? NaN).toFixed(3)}, ` +
        `speed index ${Math.round(lhr.audits['speed-index']?.numericValue ?? NaN)} ms, server ${Math.round(lhr.audits['server-response-time']?.numericValue ?? NaN)} ms, ` +
        `transfer ${((lhr.audits['total-byte-weight']?.numericValue ?? NaN) / 1024).toFixed(1)} KiB` +
        (failing.length ? `; failing: ${failing.join(', ')}` : ''),
    );
    return {
      scores: [score('performance'), score('accessibility'), score('best-practices')] as const,
      fcpMs: Math.round(lhr.audits['first-contentful-paint']?.numericValue ?? NaN),
      transferKiB: (lhr.audits['total-byte-weight']?.numericValue ?? NaN) / 1024,
    };
  } finally {
    chrome.kill();
    rmSync(profile, { recursive: true, force: true });
  }
}

/**
 * What the summary triggers add to the writes they follow: the hourly roll-up of every site (the
 * biggest such write, once an hour) with the triggers, then with them dropped (at the very end).
 */
function rollupCost(t: ReturnType<typeof createTestApp>) {
  const sqlite = t.database.sqlite;
  const ids = sqlite.prepare('select id from sites').pluck().all() as string[];
  const add = sqlite.prepare(
    `insert into uptime_hourly (site_id, bucket, up, down, response_sum, response_count, response_min, response_max)
     values (?, ?, 60, 0, 18000, 60, 120, 900)`,
  );
  const hourStart = Date.now() - (Date.now() % HOUR);
  const rollup = (bucket: number) => {
    const started = performance.now();
    sqlite.transaction(() => ids.forEach((id) => add.run(id, bucket)))();
    return performance.now() - started;
  };
  const withTriggers = rollup(hourStart);
  for (const name of sqlite
    .prepare("select name from sqlite_master where type = 'trigger' and name like 'site_summaries_hourly_%'")
    .pluck()
    .all() as string[])
    sqlite.exec(`drop trigger ${name}`);
  const without = rollup(hourStart + HOUR);
  console.log(
    `hourly roll-up of ${ids.length} sites: ${ms(withTriggers)} with the summary triggers, ${ms(without)} without`,
  );
  return { withTriggers, without };
}

async function main() {
  const t = createTestApp();
  console.log(`seeding ${SITES} sites… ${ms(seed(t))}`);
  await t.services.users.create('bench', PASSWORD);
  const signIn = await t.app.request('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: 'bench', password: PASSWORD }).toString(),
  });
  const cookie = /sw_session=[^;]+/.exec(signIn.headers.get('set-cookie') ?? '')![0];

  const paths = overviewPaths(REQUESTS);
  const baseline = await time(
    'GET /api/sites?limit=50 (baseline)',
    Array.from({ length: REQUESTS }, () => '/api/sites?limit=50'),
    (path) => t.app.request(path, { headers: { authorization: `Bearer ${t.readToken}` } }),
  );
  const mixed = await time(
    'dashboard overview (mixed pages)',
    paths,
    (path) => t.app.request(path, { headers: { cookie } }),
    true,
  );
  const first = await time(
    'dashboard overview page 1',
    Array.from({ length: REQUESTS }, () => '/'),
    (path) => t.app.request(path, { headers: { cookie } }),
  );

  const audits: ({ formFactor: string } & Awaited<ReturnType<typeof audit>>)[] = [];
  if (RUN_LIGHTHOUSE) {
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      for (const formFactor of ['mobile', 'desktop'] as const)
        audits.push({ formFactor, ...(await audit(`http://127.0.0.1:${port}/`, cookie, formFactor)) });
    } finally {
      server.close();
    }
  }
  const rollup = rollupCost(t);
  const server = (f: { p50: number; p99: number }) => `p50 ${ms(f.p50)}, p99 ${ms(f.p99)}`;
  printSummary(`dashboard (${SITES} sites, ${REQUESTS} requests a set)`, [
    {
      figure: 'overview, every sort and filter; baseline: GET /api/sites?limit=50',
      value: server(mixed),
      baseline: server(baseline),
      target: verdict('p99 ≤ 100 ms', mixed.p99 <= 100),
    },
    { figure: 'overview page 1', value: server(first), baseline: server(baseline) },
    ...audits.map(({ formFactor, scores: [performance, accessibility, bestPractices], fcpMs, transferKiB }) => ({
      figure: `Lighthouse ${formFactor}`,
      value: `performance ${performance}, accessibility ${accessibility}, best practices ${bestPractices}; FCP ${fcpMs} ms, ${transferKiB.toFixed(1)} KiB`,
      target:
        formFactor === 'mobile'
          ? verdict(
              'FCP ≤ 1 s, ≤ 300 KB, scores ≥ 90/95/95',
              fcpMs <= 1000 && transferKiB <= 300 && performance >= 90 && accessibility >= 95 && bestPractices >= 95,
            )
          : '',
    })),
    {
      figure: 'hourly roll-up of every site; baseline: without the summary triggers',
      value: ms(rollup.withTriggers),
      baseline: ms(rollup.without),
    },
  ]);
  await t.close();
}

await main();
