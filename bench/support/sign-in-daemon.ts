/**
 * The daemon's app for bench/sign-in.ts, in a process of its own (its event loop and its thread pool
 * are what the bench loads): the tests' app on an in-memory database with BENCH_SITES seeded sites
 * (bench/support/fleet-seed.ts) and a user `alice`, served on a loopback port that trusts itself as a
 * proxy, so each wrong sign-in can come from an address of its own (X-Forwarded-For): the worst case
 * for the hashing pool, the per-address throttle never stepping in. Tells the parent `{ port, token }`.
 *
 * Where the time goes, per phase (the parent sends `{ mark }` when one starts and `{ report }` when it
 * ends, and gets the figures back): the event loop's delay, the server's own time for each
 * `GET /api/sites` (from the request to its Response) and for each sign-in, and the main thread's CPU
 * and its wait for a CPU (run-queue time from /proc: contention with the hashing thread and the other
 * processes). With BENCH_CPU_PROFILE=DIR, each attacked phase's CPU profile of the main thread is
 * written to DIR (open it in Chrome's DevTools, or `node --import tsx bench/lab/profile-summary.ts FILE`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { createTrustedProxies } from '../../src/http/client-address.js';
import { createTestApp } from '../../test/support/test-app.js';
import { seedFleet } from './fleet-seed.js';

const SITES = Number(process.env.BENCH_SITES ?? 1_000);
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const t = createTestApp({ app: { trustedProxies: createTrustedProxies(['127.0.0.1']) } });
seedFleet(t.database.sqlite, SITES);
await t.services.users.create('alice', 'correct horse battery staple');

/** The figures of one phase, as the parent gets them (ms). */
export interface DaemonPhaseReport {
  loopDelayP99: number;
  loopDelayMax: number;
  apiServerP99: number;
  apiServerMax: number;
  signInServerMean: number;
  signInServerP99: number;
  mainCpuMs: number;
  mainRunQueueMs: number;
  processCpuMs: number;
  wallMs: number;
}

const loop = monitorEventLoopDelay({ resolution: 5 });
let apiTimes: number[] = [];
let signInTimes: number[] = [];
let markedAt = performance.now();
let cpuAt = process.cpuUsage();
/** The main thread's CPU time and run-queue wait so far (ns), from /proc. */
const mainSchedstat = () => readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
let schedAt = mainSchedstat();
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
};

const fetch = async (request: Request, env?: unknown): Promise<Response> => {
  const started = performance.now();
  const response = await t.app.fetch(request, env);
  const took = performance.now() - started;
  if (request.method === 'POST') signInTimes.push(took);
  else apiTimes.push(took);
  return response;
};

const session = PROFILE_DIR ? new Session() : null;
let profiling = false;
if (session) {
  mkdirSync(PROFILE_DIR!, { recursive: true });
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
}

const server = serve({ fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.send!({ port: info.port, token: t.readToken });
});
process.on('message', (message: { stop?: true; mark?: { profile?: boolean }; report?: true }) => {
  void (async () => {
    if (message.mark) {
      loop.reset();
      loop.enable();
      apiTimes = [];
      signInTimes = [];
      markedAt = performance.now();
      cpuAt = process.cpuUsage();
      schedAt = mainSchedstat();
      if (session && message.mark.profile) {
        await session.post('Profiler.start');
        profiling = true;
      }
      process.send!({ marked: true });
    } else if (message.report) {
      const sched = mainSchedstat();
      const cpu = process.cpuUsage(cpuAt);
      loop.disable();
      const report: DaemonPhaseReport = {
        loopDelayP99: loop.percentile(99) / 1e6,
        loopDelayMax: loop.max / 1e6,
        apiServerP99: percentile(apiTimes, 99),
        apiServerMax: Math.max(0, ...apiTimes),
        signInServerMean: signInTimes.reduce((a, b) => a + b, 0) / Math.max(1, signInTimes.length),
        signInServerP99: percentile(signInTimes, 99),
        mainCpuMs: (sched[0]! - schedAt[0]!) / 1e6,
        mainRunQueueMs: (sched[1]! - schedAt[1]!) / 1e6,
        processCpuMs: (cpu.user + cpu.system) / 1e3,
        wallMs: performance.now() - markedAt,
      };
      if (session && profiling) {
        profiling = false;
        const { profile } = await session.post('Profiler.stop');
        writeFileSync(join(PROFILE_DIR!, `sign-in-${Date.now()}.cpuprofile`), JSON.stringify(profile));
      }
      process.send!({ report });
    } else if (message.stop) {
      server.close();
      await t.close();
      process.exit(0);
    }
  })();
});
