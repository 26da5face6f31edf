/**
 * The bulk-update benches' baseline caller in a process of its own: one POST to each fake site's
 * connector update route by `fetch`, `concurrency` at a time, its own CPU measured around the calls
 * (process.cpuUsage, V8's helper threads included). Apart from the daemon, so its figure is the
 * calls' alone: in the daemon's process, each collection its garbage brings on also marks the
 * daemon's heap, a cost that grows with the fleet the daemon holds (bench/bulk-updates.ts measures both,
 * the in-process one with `updateEachSite` here).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeSite } from './fake-fleet.js';

interface Call {
  sites: FakeSite[];
  /** The update request's JSON body. */
  body: string;
  concurrency: number;
  /** Reads each site's offers first, unmeasured, leaving a connection open to each (`BENCH_CONNECTIONS=open`). */
  warm: boolean;
  /** How long after the calls `closedCpuMs` is read: past fetch's keep-alive, so the calls' connections have closed. */
  closeWaitMs: number;
}
interface Measured {
  cpuMs: number;
  wallMs: number;
  /** The calls' CPU and their connections' closing. */
  closedCpuMs: number;
}

const once = (child: ChildProcess) => new Promise<unknown>((resolve) => child.once('message', resolve));

export function startDirectCaller() {
  const child = fork(import.meta.filename, ['call'], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    stdio: 'inherit',
  });
  return {
    /** The updates made once; the caller's CPU and time for them. */
    async run(call: Call): Promise<Measured> {
      child.send(call);
      return (await once(child)) as Measured;
    },
    close: () => void child.kill(),
  };
}

const authorization = (site: FakeSite) =>
  `Basic ${Buffer.from(`${site.username}:${site.applicationPassword}`).toString('base64')}`;

async function eachSite(
  { sites, concurrency }: Pick<Call, 'sites' | 'concurrency'>,
  request: (site: FakeSite) => Promise<Response>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < sites.length) {
      const response = await request(sites[next++]!);
      if (!response.ok) throw new Error(`direct call: ${response.status}`);
      await response.json();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** The baseline: one POST to each site's connector update route by `fetch`, `concurrency` at a time (in this process). */
export const updateEachSite = (call: Pick<Call, 'sites' | 'body' | 'concurrency'>) =>
  eachSite(call, (site) =>
    fetch(`${site.url}/wp-json/sitewarden/v1/plugins/update`, {
      method: 'POST',
      headers: { authorization: authorization(site), 'content-type': 'application/json' },
      body: call.body,
    }),
  );

/** Each site's offers read by `fetch`, `concurrency` at a time (leaves a connection open to each). */
export const readEachSitesOffers = (call: Pick<Call, 'sites' | 'concurrency'>) =>
  eachSite(call, (site) =>
    fetch(`${site.url}/wp-json/sitewarden/v1/updates`, { headers: { authorization: authorization(site) } }),
  );

/** The child: one measured round of updates per message. */
function serve(): void {
  process.on('message', (message) => {
    void (async () => {
      const call = message as Call;
      if (call.warm) await readEachSitesOffers(call);
      (globalThis as { gc?: () => void }).gc?.();
      await sleep(250);
      const cpu = process.cpuUsage();
      const start = performance.now();
      await updateEachSite(call);
      const used = process.cpuUsage(cpu);
      const wallMs = performance.now() - start;
      await sleep(call.closeWaitMs);
      const closed = process.cpuUsage(cpu);
      process.send!({
        cpuMs: (used.user + used.system) / 1000,
        wallMs,
        closedCpuMs: (closed.user + closed.system) / 1000,
      } satisfies Measured);
    })();
  });
}

if (process.argv[2] === 'call') serve();
