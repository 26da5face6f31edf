/**
 * Performance-audit benchmark: the built daemon (`dist/`, as systemd runs it) audits a real test
 * WordPress site N times, then Lighthouse's own CLI audits it N times with the same Chromium
 * flags; prints the throughput ratio, the daemon's event-loop delay and API latency while audits
 * run, its RSS across the audits (the audit workers are separate processes), and the bytes stored
 * per audit. Not run by the tests. Usage (figures in docs/benchmarks.md):
 *
 *   npm run build && node --import tsx bench/performance.ts        # N = 10, RSS over 50 audits
 *   BENCH_AUDITS=5 BENCH_RSS_AUDITS=20 node --import tsx bench/performance.ts
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { chromeFlags } from '../src/performance/chrome-flags.js';
import { startDaemonProcess } from '../test/support/daemon-process.js';
import { printSummary, verdict } from './support/summary.js';
import { startPrivateMariaDb } from '../test/support/mariadb.js';
import { startPluginMirror } from '../test/support/plugin-mirror.js';
import { FIXTURES_DIR } from '../test/support/wordpress/paths.js';
import { provisionTestSite } from '../test/support/wordpress/test-site.js';
import { createRunDir, removeRunDir } from '../test/support/work-dir.js';

const ROOT = resolve(import.meta.dirname, '..');
const N = Number(process.env.BENCH_AUDITS ?? 10);
const RSS_AUDITS = Math.max(N, Number(process.env.BENCH_RSS_AUDITS ?? 50));
const CHROME_PATH = process.env.CHROME_PATH ?? '/usr/bin/chromium';

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

interface Probe {
  resets: number;
  p50: number;
  p99: number;
  max: number;
  rss: number;
  heapUsed: number;
}

async function main() {
  if (!existsSync(join(ROOT, 'dist/src/performance/audit-worker.js'))) throw new Error('run `npm run build` first');
  const runDir = createRunDir();
  const mariadb = await startPrivateMariaDb({ dir: runDir });
  const mirror = await startPluginMirror({
    fixturesDir: join(FIXTURES_DIR, 'directory'),
    zipDir: join(runDir, 'mirror'),
    forks: [],
  });
  const site = await provisionTestSite({
    mariadbSocket: mariadb.socketPath,
    pluginMirrorUrl: mirror.url,
    testWorkDir: runDir,
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-'));
  const probeFile = join(dataDir, 'probe.json');
  const daemon = await startDaemonProcess({
    SITEWARDEN_DATA_DIR: dataDir,
    CHROME_PATH,
    PERF_PROBE_FILE: probeFile,
    NODE_OPTIONS: `--import ${join(ROOT, 'bench/support/performance-probe.mjs')}`,
  });
  const base = `http://127.0.0.1:${daemon.port}/api`;
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const api = async (method: string, path: string, json?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const probe = (): Probe => JSON.parse(readFileSync(probeFile, 'utf8')) as Probe;

  try {
    const { id: siteId } = await api('POST', '/sites', {
      url: site.url,
      username: site.admin.username,
      applicationPassword: site.admin.applicationPassword,
    });
    await api('PATCH', `/sites/${siteId}`, { performance: { enabled: false } });

    // API latency with nothing running, as the baseline.
    const latency = async (durationMs: number) => {
      const samples: number[] = [];
      const until = Date.now() + durationMs;
      while (Date.now() < until) {
        const start = performance.now();
        await api('GET', `/sites/${siteId}/performance?limit=20`);
        samples.push(performance.now() - start);
        await sleep(50);
      }
      return samples;
    };
    const idleLatency = await latency(10_000);

    const auditOnce = async () => {
      const queued = await api('POST', `/sites/${siteId}/performance`, { formFactor: 'mobile' });
      for (;;) {
        const audit = await api('GET', `/sites/${siteId}/performance/${queued.id}`);
        if (audit.status === 'completed') return audit;
        if (audit.status === 'failed') throw new Error(`audit failed: ${JSON.stringify(audit.failure)}`);
        await sleep(100);
      }
    };

    await auditOnce(); // warm-up: page caches, first Chromium start
    process.kill(daemon.child.pid!, 'SIGUSR2');
    await sleep(600);
    const rssSeries: number[] = [probe().rss];

    // Throughput and responsiveness while audits run. The API is sampled through the CLI phase
    // too, so both phases share the machine with the same load.
    const busyLatency: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) busyLatency.push(...(await latency(1_000)));
    })();
    const daemonStart = performance.now();
    for (let i = 0; i < N; i++) {
      await auditOnce();
      rssSeries.push(probe().rss);
    }
    const daemonSeconds = (performance.now() - daemonStart) / 1000;
    const auditLatency = [...busyLatency];
    await sleep(600);
    const loop = probe();

    // The same N audits through Lighthouse's CLI, same Chromium and flags.
    const cliDir = join(dataDir, 'cli');
    mkdirSync(cliDir);
    const flags = chromeFlags({
      auditedHost: new URL(site.url).hostname,
      runningAsRoot: process.getuid?.() === 0,
      blockThirdParty: true,
    });
    const cliStart = performance.now();
    for (let i = 0; i < N; i++) {
      const args = [
        join(ROOT, 'node_modules/lighthouse/cli/index.js'),
        site.url,
        '--quiet',
        '--output=html',
        `--output-path=${join(cliDir, `${i}.html`)}`,
        '--only-categories=performance,accessibility,best-practices,seo',
        '--disable-full-page-screenshot',
        `--chrome-flags=${flags.join(' ')}`,
      ];
      const code = await new Promise<number | null>((done) =>
        spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, CHROME_PATH } }).once('exit', done),
      );
      if (code !== 0) throw new Error(`lighthouse CLI exited with ${code}`);
    }
    const cliSeconds = (performance.now() - cliStart) / 1000;
    sampling = false;
    await sampler;

    // RSS across more audits (the daemon only; workers are their own processes).
    for (let i = N; i < RSS_AUDITS; i++) {
      await auditOnce();
      rssSeries.push(probe().rss);
    }

    const db = new Database(join(dataDir, 'sitewarden.db'), { readonly: true });
    const rows = db.prepare('select count(*) as count from performance_audits').get() as { count: number };
    // The row's own bytes (text lengths, 8 per number), and the pages the table and its indexes take.
    const columns = (
      db.prepare('select name from pragma_table_info(?)').all('performance_audits') as { name: string }[]
    ).map(
      ({ name }) =>
        `coalesce(case typeof("${name}") when 'text' then length("${name}") when 'null' then 0 else 8 end, 0)`,
    );
    const rowBytes = (
      db.prepare(`select sum(${columns.join(' + ')}) as bytes from performance_audits`).get() as { bytes: number }
    ).bytes;
    let pageBytes = NaN;
    try {
      pageBytes = (
        db.prepare("select sum(pgsize) as bytes from dbstat where name like 'performance_audits%'").get() as {
          bytes: number;
        }
      ).bytes;
    } catch {
      // dbstat not compiled in
    }
    db.close();
    const reportDir = join(dataDir, 'performance/reports', siteId);
    const reportSizes = readdirSync(reportDir).map((file) => statSync(join(reportDir, file)).size);
    const mb = (bytes: number) => round(bytes / 1024 / 1024);
    const firstRss = rssSeries[1] ?? rssSeries[0]!;
    const lastRss = rssSeries.at(-1)!;

    console.log(
      `\nperformance benchmark: ${N} audits for the ratio, ${rssSeries.length - 1} for RSS (mobile, ${site.url}, ${CHROME_PATH})`,
    );
    console.log(
      `throughput   daemon ${round(daemonSeconds / N, 2)} s/audit, lighthouse CLI ${round(cliSeconds / N, 2)} s/audit, overhead ${round((daemonSeconds / cliSeconds - 1) * 100)} % (target ≤ 10 %)`,
    );
    console.log(
      `event loop   while auditing p50 ${loop.p50} ms, p99 ${loop.p99} ms, max ${loop.max} ms (target p99 ≤ 50 ms)`,
    );
    console.log(
      `API latency  idle p50 ${round(percentile(idleLatency, 50), 2)} ms p99 ${round(percentile(idleLatency, 99), 2)} ms; while the daemon audits p50 ${round(percentile(auditLatency, 50), 2)} ms p99 ${round(percentile(auditLatency, 99), 2)} ms (${auditLatency.length} requests)`,
    );
    const every10 = rssSeries.map((rss, i) => [i, rss] as const).filter(([i]) => i === 1 || i % 10 === 0);
    console.log(
      `daemon RSS   by audit: ${every10.map(([i, rss]) => `${i}: ${mb(rss)} MB`).join(', ')}; heap used at the end ${mb(probe().heapUsed)} MB`,
    );
    console.log(
      `daemon RSS   after warm-up ${mb(rssSeries[0]!)} MB, after audit 1 ${mb(firstRss)} MB, after audit ${rssSeries.length - 1} ${mb(lastRss)} MB, max ${mb(Math.max(...rssSeries))} MB (growth ${mb(lastRss - firstRss)} MB)`,
    );
    console.log(
      `storage      SQLite ${round(rowBytes / rows.count, 0)} bytes/audit of row data, ${round(pageBytes / rows.count, 0)} bytes/audit of table + index pages (${rows.count} audits); report on disk ${round(reportSizes.reduce((a, b) => a + b, 0) / reportSizes.length / 1024)} KB/audit gzip`,
    );
    const overhead = (daemonSeconds / cliSeconds - 1) * 100;
    const percentiles = (samples: number[]) =>
      `p50 ${round(percentile(samples, 50), 2)} ms, p99 ${round(percentile(samples, 99), 2)} ms`;
    printSummary(`performance (${N} audits, RSS over ${rssSeries.length - 1})`, [
      {
        figure: "seconds per audit through the daemon; baseline: Lighthouse's CLI, same flags",
        value: `${round(daemonSeconds / N, 2)} s, overhead ${round(overhead)} %`,
        baseline: `${round(cliSeconds / N, 2)} s`,
        target: verdict('≤ 10 %', overhead <= 10),
      },
      {
        figure: 'event-loop delay while auditing',
        value: `p99 ${loop.p99} ms`,
        target: verdict('p99 ≤ 50 ms', loop.p99 <= 50),
      },
      {
        figure: 'API latency while auditing; baseline: idle',
        value: percentiles(auditLatency),
        baseline: percentiles(idleLatency),
      },
      {
        figure: 'daemon RSS over the audits',
        value: `${mb(firstRss)} → ${mb(lastRss)} MB (max ${mb(Math.max(...rssSeries))})`,
      },
    ]);
  } finally {
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    await site.stop();
    await mirror.close();
    await mariadb.stop();
    removeRunDir(runDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
