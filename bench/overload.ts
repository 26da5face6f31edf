/**
 * Overload shedding (issue 33): 200 browsers loading the fleet overview at once (10,000 sites) while an
 * API client reads `GET /api/sites?limit=50`, with shedding on (SITEWARDEN_OVERLOAD_LAG_MS, 500 ms) against
 * the same load with it off, in alternating phases on the same daemon process (bench/support/overload-daemon.ts:
 * the tests' app on an in-memory database, seeded like bench/dashboard.ts). The overview load is BENCH_BROWSERS
 * keep-alive connections (undici), each loading `/` one page after another (gzip asked for, as a browser does;
 * after a 503 it waits Retry-After); the API client is BENCH_API_CLIENTS loops of one request at a time on a
 * thread of its own, each given up after BENCH_API_TIMEOUT_MS (a timeout). The figures are medians over the rounds.
 *
 * Every connection is opened before the load starts. A connection opened *during* the load waits in the
 * kernel's accept queue, unseen by the daemon (so by any shedding): with autocannon's 200 connections opened
 * at once, 141 were still unaccepted 4 s in, and a new connection's first byte took 10–20 s, shedding on or off
 * (a bare node:http server shows the same). BENCH_TRACE=1: the daemon prints its lag and statuses every second.
 *
 *   npm run bench -- overload                                 # 3 rounds of 15 s per mode
 *   BENCH_ROUNDS=5 BENCH_SECONDS=20 BENCH_SITES=10000 npm run bench -- overload
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { printSummary, verdict } from './support/summary.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const BROWSERS = Number(process.env.BENCH_BROWSERS ?? 200);
const API_CLIENTS = Number(process.env.BENCH_API_CLIENTS ?? 4);
const API_TIMEOUT_MS = Number(process.env.BENCH_API_TIMEOUT_MS ?? 10_000);
const SITES = Number(process.env.BENCH_SITES ?? 10_000);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const median = (values: number[]) => percentile(values, 50);
const ms = (value: number) => (value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(0)} ms`);

interface Daemon {
  child: ChildProcess;
  base: string;
  cookie: string;
  token: string;
}

async function startDaemon(): Promise<Daemon> {
  const child = fork(join(import.meta.dirname, 'support/overload-daemon.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_SITES: String(SITES) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ port: number; cookie: string; token: string; seededMs: number }>(
    (resolve, reject) => {
      child.once('message', (message) => resolve(message as never));
      child.once('exit', (code) => reject(new Error(`the daemon exited (${code}) before it served`)));
    },
  );
  console.log(`daemon on port ${ready.port}; ${SITES} sites seeded in ${ms(ready.seededMs)}`);
  return { child, base: `http://127.0.0.1:${ready.port}`, cookie: ready.cookie, token: ready.token };
}

function setShedding(daemon: Daemon, shed: boolean): Promise<void> {
  return new Promise((resolve) => {
    daemon.child.once('message', () => resolve());
    daemon.child.send({ shed });
  });
}

/**
 * Waits until the previous phase's backlog has drained (the requests autocannon left in flight are still
 * rendered): five answers from /healthz in a row, each within 50 ms.
 */
async function quiet(daemon: Daemon): Promise<void> {
  let fast = 0;
  for (let i = 0; i < 1200 && fast < 5; i++) {
    const started = performance.now();
    await (await fetch(`${daemon.base}/healthz`)).text();
    fast = performance.now() - started < 50 ? fast + 1 : 0;
    await sleep(200);
  }
}

interface Phase {
  apiLatencies: number[];
  apiOk: number;
  apiOverloaded: number;
  apiTimeouts: number;
  apiOther: number;
  overviewOk: number;
  overviewOverloaded: number;
  overviewFailed: number;
  overviewOkPerSecond: number;
}

/**
 * The API client, on a thread of its own so that the overview load's own event loop (autocannon, here)
 * adds nothing to the latencies it measures: BENCH_API_CLIENTS loops of one request at a time.
 */
const API_PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const { base, token, durationMs, clients, timeoutMs } = workerData;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const result = { apiLatencies: [], apiOk: 0, apiOverloaded: 0, apiTimeouts: 0, apiOther: 0 };
let stopAt = Infinity;
async function warm() {
  const response = await fetch(base + '/api/sites?limit=50', { headers: { authorization: 'Bearer ' + token } });
  await response.arrayBuffer();
}
async function client() {
  while (performance.now() < stopAt) {
    const started = performance.now();
    try {
      const response = await fetch(base + '/api/sites?limit=50', {
        headers: { authorization: 'Bearer ' + token },
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.arrayBuffer();
      result.apiLatencies.push(performance.now() - started);
      if (response.status === 200) result.apiOk++;
      else if (response.status === 503) {
        result.apiOverloaded++;
        await sleep(100); // a client honouring Retry-After would wait longer; this one keeps asking
      } else result.apiOther++;
    } catch {
      result.apiLatencies.push(performance.now() - started);
      result.apiTimeouts++;
    }
  }
}
// Each client's keep-alive connection is opened before the load starts (see the file's header), then measured.
Promise.all(Array.from({ length: clients }, warm)).then(() => {
  parentPort.postMessage('ready');
  parentPort.once('message', () => {
    stopAt = performance.now() + durationMs;
    Promise.all(Array.from({ length: clients }, client)).then(() => parentPort.postMessage(result));
  });
});
`;

/** Starts the API client's thread and its connections; `start()` then measures for `durationMs`. */
async function apiProbe(daemon: Daemon, durationMs: number) {
  const worker = new Worker(API_PROBE, {
    eval: true,
    workerData: {
      base: daemon.base,
      token: daemon.token,
      durationMs,
      clients: API_CLIENTS,
      timeoutMs: API_TIMEOUT_MS,
    },
  });
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    start(): Promise<Omit<Phase, `overview${string}`>> {
      const done = new Promise<Omit<Phase, `overview${string}`>>((resolve, reject) => {
        worker.once('message', (message) => {
          resolve(message as never);
          void worker.terminate();
        });
        worker.once('error', reject);
      });
      worker.postMessage('start');
      return done;
    },
  };
}

async function phase(daemon: Daemon): Promise<Phase> {
  const probe = await apiProbe(daemon, SECONDS * 1000);
  const result: Phase = {
    apiLatencies: [],
    apiOk: 0,
    apiOverloaded: 0,
    apiTimeouts: 0,
    apiOther: 0,
    overviewOk: 0,
    overviewOverloaded: 0,
    overviewFailed: 0,
    overviewOkPerSecond: 0,
  };
  const [overview, api] = await Promise.all([browsers(daemon), probe.start()]);
  Object.assign(result, api, overview);
  return result;
}

/**
 * BROWSERS keep-alive connections, all opened (and accepted by the daemon) before the load starts, each then
 * loading the overview one page after another for SECONDS, as many browsers on an open dashboard would: a
 * connection the daemon has not accepted yet waits in the kernel's accept queue, where no shedding reaches it.
 */
async function browsers(
  daemon: Daemon,
): Promise<Pick<Phase, 'overviewOk' | 'overviewOverloaded' | 'overviewFailed' | 'overviewOkPerSecond'>> {
  const pool = new Pool(daemon.base, { connections: BROWSERS, headersTimeout: 60_000, bodyTimeout: 60_000 });
  try {
    await Promise.all(
      Array.from({ length: BROWSERS }, async () =>
        (await pool.request({ method: 'GET', path: '/healthz' })).body.text(),
      ),
    );
    const stopAt = performance.now() + SECONDS * 1000;
    let ok = 0;
    let overloaded = 0;
    let failed = 0;
    const browser = async () => {
      while (performance.now() < stopAt) {
        try {
          const response = await pool.request({
            method: 'GET',
            path: '/',
            headers: { cookie: daemon.cookie, 'accept-encoding': 'gzip' },
          });
          await response.body.arrayBuffer();
          if (response.statusCode === 200) ok++;
          else if (response.statusCode === 503) {
            overloaded++;
            // A browser shows the refusal; its user (or the page's reload) comes back after Retry-After.
            await sleep(Number(response.headers['retry-after'] ?? 1) * 1000);
          }
        } catch {
          failed++; // a connection the daemon closed (idle past its keep-alive timeout) or a timeout
        }
      }
    };
    await Promise.all(Array.from({ length: BROWSERS }, browser));
    return {
      overviewOk: ok,
      overviewOverloaded: overloaded,
      overviewFailed: failed,
      overviewOkPerSecond: ok / SECONDS,
    };
  } finally {
    await pool.destroy();
  }
}

function describePhase(label: string, p: Phase): string {
  return `${label}: API p50 ${ms(median(p.apiLatencies))}, p99 ${ms(percentile(p.apiLatencies, 99))} over ${p.apiLatencies.length} (200: ${p.apiOk}, 503: ${p.apiOverloaded}, timeouts: ${p.apiTimeouts}, other: ${p.apiOther}); overview 200: ${p.overviewOk} (${p.overviewOkPerSecond.toFixed(1)}/s), 503: ${p.overviewOverloaded}, failed: ${p.overviewFailed}`;
}

async function main() {
  const daemon = await startDaemon();
  const phases: Record<'on' | 'off', Phase[]> = { on: [], off: [] };
  try {
    // Warm the statement cache and the JIT.
    for (let i = 0; i < 20; i++) await (await fetch(`${daemon.base}/`, { headers: { cookie: daemon.cookie } })).text();
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which mode goes first, so neither always runs on a warmer (or busier) machine.
      for (const mode of round % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        await setShedding(daemon, mode === 'on');
        await quiet(daemon);
        const measured = await phase(daemon);
        phases[mode].push(measured);
        console.log(describePhase(`round ${round}, shedding ${mode}`, measured));
      }
    }
  } finally {
    daemon.child.send({ stop: true });
    await new Promise((resolve) => daemon.child.once('exit', resolve));
  }
  const figure = (mode: 'on' | 'off', of: (p: Phase) => number) => median(phases[mode].map(of));
  const apiP50 = (p: Phase) => median(p.apiLatencies);
  const apiP99 = (p: Phase) => percentile(p.apiLatencies, 99);
  const share503 = (p: Phase) => (100 * p.apiOverloaded) / Math.max(1, p.apiLatencies.length);
  printSummary(`overload (${SITES} sites, ${BROWSERS} browsers on the overview, ${ROUNDS} rounds of ${SECONDS} s)`, [
    {
      figure: 'API median latency under the load, median of rounds; baseline: shedding off',
      value: ms(figure('on', apiP50)),
      baseline: ms(figure('off', apiP50)),
      target: verdict('≤ 1 s', figure('on', apiP50) <= 1000),
    },
    { figure: 'API p99 latency', value: ms(figure('on', apiP99)), baseline: ms(figure('off', apiP99)) },
    {
      figure: `API requests given up after ${API_TIMEOUT_MS / 1000} s`,
      value: String(figure('on', (p) => p.apiTimeouts)),
      baseline: String(figure('off', (p) => p.apiTimeouts)),
      target: verdict('none', figure('on', (p) => p.apiTimeouts) === 0),
    },
    {
      figure: 'API answers that were 503 overloaded',
      value: `${figure('on', share503).toFixed(0)} %`,
      baseline: `${figure('off', share503).toFixed(0)} %`,
    },
    {
      figure: 'overview pages served (200) a second',
      value: figure('on', (p) => p.overviewOkPerSecond).toFixed(1),
      baseline: figure('off', (p) => p.overviewOkPerSecond).toFixed(1),
    },
  ]);
}

await main();
