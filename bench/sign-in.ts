/**
 * Sign-in under attack (issue 33): 120 wrong passwords at once, each from an address of its own (the
 * sign-in throttle lets every one through: the worst case for the hashing pool), again and again for
 * BENCH_SECONDS (default 10), while a client asks `GET /api/sites?limit=50` every 20 ms and times each
 * answer. Baseline, same run: the same client with no sign-ins. BENCH_ROUNDS (default 3) rounds of
 * each, alternating; the figures are the medians of the rounds. The daemon runs in its own process
 * (bench/support/sign-in-daemon.ts) with BENCH_SITES (default 1,000) sites. Each phase also prints
 * where the daemon's time went: its event-loop delay, its own time per request, its main thread's
 * CPU and its wait for a CPU (contention), and this process's loop delay (the client's lateness).
 * BENCH_CPU_PROFILE=DIR: a CPU profile of the daemon's main thread per attacked phase.
 *
 *   npm run bench -- sign-in
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DaemonPhaseReport } from './support/sign-in-daemon.js';
import { printSummary, verdict } from './support/summary.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 120);
const SITES = Number(process.env.BENCH_SITES ?? 1_000);

const ms = (value: number) => `${value.toFixed(0)} ms`;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
};
const median = (values: number[]) => percentile(values, 50);

interface Phase {
  latencies: number[];
  signIns: Map<number, number>;
  /** Where the daemon's time went (bench/support/sign-in-daemon.ts). */
  daemon: DaemonPhaseReport;
  /** This process's own event-loop delay p99 (ms): the client's lateness, not the daemon's. */
  clientLoopP99: number;
}

/** Sends the daemon a message and waits for its answer carrying `key`. */
function ask<T>(child: ChildProcess, message: object, key: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (answer: Record<string, unknown>) => {
      if (!(key in answer)) return;
      child.off('message', onMessage);
      resolve(answer[key] as T);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

async function phase(child: ChildProcess, base: string, token: string, attack: boolean, round: number): Promise<Phase> {
  await ask(child, { mark: { profile: attack } }, 'marked');
  const clientLoop = monitorEventLoopDelay({ resolution: 5 });
  clientLoop.enable();
  const until = Date.now() + SECONDS * 1000;
  const latencies: number[] = [];
  const signIns = new Map<number, number>();
  const probe = (async () => {
    while (Date.now() < until) {
      const started = performance.now();
      const response = await fetch(`${base}/api/sites?limit=50`, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      await sleep(20);
    }
  })();
  const attacker = (async () => {
    if (!attack) return;
    let burst = 0;
    while (Date.now() < until) {
      burst++;
      await Promise.all(
        Array.from({ length: ATTEMPTS }, async (_, i) => {
          const response = await fetch(`${base}/sign-in`, {
            method: 'POST',
            redirect: 'manual',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              'x-forwarded-for': `10.${round}.${burst % 250}.${i + 1}`,
            },
            body: new URLSearchParams({ username: 'alice', password: `wrong guess ${burst}-${i}` }).toString(),
          });
          await response.arrayBuffer();
          signIns.set(response.status, (signIns.get(response.status) ?? 0) + 1);
        }),
      );
    }
  })();
  await Promise.all([probe, attacker]);
  clientLoop.disable();
  const daemon = await ask<DaemonPhaseReport>(child, { report: true }, 'report');
  return { latencies, signIns, daemon, clientLoopP99: clientLoop.percentile(99) / 1e6 };
}

async function main() {
  const child: ChildProcess = fork(join(import.meta.dirname, 'support/sign-in-daemon.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_SITES: String(SITES) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ port: number; token: string }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as never));
    child.once('exit', (code) => reject(new Error(`the daemon exited (${code}) before it served`)));
  });
  const base = `http://127.0.0.1:${ready.port}`;
  const quiet: Phase[] = [];
  const attacked: Phase[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      quiet.push(await phase(child, base, ready.token, false, round));
      const measured = await phase(child, base, ready.token, true, round);
      attacked.push(measured);
      console.log(
        `round ${round}: p99 ${ms(percentile(quiet.at(-1)!.latencies, 99))} quiet, ${ms(percentile(measured.latencies, 99))} under attack; sign-in answers ${JSON.stringify([...measured.signIns])}`,
      );
      for (const [name, p] of [
        ['quiet', quiet.at(-1)!],
        ['attack', measured],
      ] as const) {
        const d = p.daemon;
        console.log(
          `  ${name}: daemon loop delay p99 ${d.loopDelayP99.toFixed(1)} max ${d.loopDelayMax.toFixed(1)} ms; ` +
            `GET server time p99 ${d.apiServerP99.toFixed(1)} max ${d.apiServerMax.toFixed(1)} ms; ` +
            `sign-in server time mean ${d.signInServerMean.toFixed(1)} p99 ${d.signInServerP99.toFixed(1)} ms; ` +
            `main thread CPU ${d.mainCpuMs.toFixed(0)} ms, waiting for a CPU ${d.mainRunQueueMs.toFixed(0)} ms, ` +
            `process CPU ${d.processCpuMs.toFixed(0)} ms over ${d.wallMs.toFixed(0)} ms; client loop delay p99 ${p.clientLoopP99.toFixed(1)} ms`,
        );
      }
    }
  } finally {
    child.send({ stop: true });
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const figure = (phases: Phase[], of: (p: Phase) => number) => median(phases.map(of));
  const p99 = (p: Phase) => percentile(p.latencies, 99);
  const p50 = (p: Phase) => median(p.latencies);
  const refused = (p: Phase) => {
    const all = [...p.signIns.values()].reduce((a, b) => a + b, 0);
    return (100 * (p.signIns.get(429) ?? 0)) / Math.max(1, all);
  };
  printSummary(`sign-in (${ATTEMPTS} wrong passwords at once, ${ROUNDS} rounds of ${SECONDS} s, ${SITES} sites)`, [
    {
      figure: 'GET /api/sites p99 during the attack, median of rounds; baseline: no attack',
      value: ms(figure(attacked, p99)),
      baseline: ms(figure(quiet, p99)),
      target: verdict('≤ 100 ms', figure(attacked, p99) <= 100),
    },
    { figure: 'GET /api/sites median', value: ms(figure(attacked, p50)), baseline: ms(figure(quiet, p50)) },
    {
      figure: 'wrong sign-ins refused before hashing (429 sign-in-busy)',
      value: `${figure(attacked, refused).toFixed(0)} %`,
    },
  ]);
}

await main();
