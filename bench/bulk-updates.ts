/**
 * Bulk-update overhead: the daemon's CPU per site update and the time per site of a bulk update
 * (`POST /api/fleet/updates/apply`, one plugin on every site), against calling the connector's
 * update route directly for the same update on the same sites, in the same run, at the same
 * concurrency: by `fetch` from a process of its own (bench/support/direct-caller.ts), and from the daemon's
 * process, where each collection the calls' garbage brings on also marks the daemon's heap (dearer
 * the more sites the daemon holds). Also against the single-site update route for the same updates
 * (the service path a bulk update applies through: the site's lists read before and after, the
 * inventory refreshed, so the bulk machinery's own cost shows apart). The sites are fake WordPress
 * sites (bench/support/fake-fleet.ts) in a child process, so their CPU is not counted; each update takes
 * BENCH_UPDATE_MS there, standing in for WordPress's upgrader (a real one takes seconds). The daemon
 * runs in this process, built (bench/support/in-process-daemon.ts: the service graph and app from `dist/`, a
 * database file as the daemon keeps one, logging at `info` to a file), with the systemd unit's memory
 * settings (bench/support/unit-memory.ts: the bench starts itself again with them; node flags given to the
 * bench come after the unit's and win; BENCH_UNIT_MEMORY=0: V8's defaults). Not run by the tests.
 *
 * Each phase also runs against the same update made through the daemon's own client alone (the
 * request in a SiteAccess hold: credentials, queue, answer checked; nothing stored): what is left
 * above it is the bulk machinery's own cost (job rows, history, inventory patch, events).
 *
 * Connections (BENCH_CONNECTIONS): `fresh` (the default) starts each phase once every keep-alive
 * connection has closed (the daemon's and fetch's after 4 s idle, the fake's after 5 s), so each
 * site update opens its connection, as it does in production, where a bulk update reaches each site
 * once, hours after its last sync; `open` runs each phase on connections left open just before
 * (the reset's syncs for the daemon, an offers read by fetch for the baseline): the bulk machinery's
 * share at its largest.
 *
 *   npm run build && node --expose-gc --import tsx bench/bulk-updates.ts
 *   BENCH_SITES=200 BENCH_CONCURRENCY=8 BENCH_UPDATE_MS=0 node --expose-gc --import tsx bench/bulk-updates.ts
 *   (--expose-gc collects garbage before each phase: steadier figures)
 *
 * A warm-up round runs first and is not counted (BENCH_WARMUP=0: none).
 *
 * CPU is the whole process's (process.cpuUsage), V8's helper threads included (concurrent marking
 * and sweeping, compilation: 30–50 % of a phase's main-thread figure here), so a phase's figure
 * swings between rounds; the last line gives the medians over the rounds. Each phase starts after
 * the last one's trailing work and, with --expose-gc, after a collection and its sweeping. On fresh
 * connections, each site update's connection closes once idle, 4 s after its answer, so at 100 sites
 * a phase ends before any of its closes and at 500 it counts most of them: the bulk and the direct
 * calls are also given "with the connections closed", their CPU read again past the keep-alive.
 *
 * The fake sites run connector 1.5.0, whose update route takes the version expected: a bulk site
 * update is one request, the same one the direct baseline makes (`expectedVersion` included).
 * BENCH_CONNECTOR=1.4.0 runs them as an older connector: the bulk reads the offers first (two
 * requests), the baseline sends no `expectedVersion`.
 *
 * BENCH_TLS=1 serves the fake sites over HTTPS, as every production site answers (WordPress offers
 * Application Passwords over HTTPS only, outside a `local` environment): a certificate authority made
 * for the run (bench/support/bench-tls.ts; the bench starts itself again trusting it) and no session
 * resumption, so each fresh connection, the daemon's and fetch's alike, makes a full handshake, as
 * one to a site last reached hours before does. The default is plain HTTP, as the test bed runs.
 *
 * BENCH_PARTS=1 also measures, per site, the offers read (a connector older than 1.5.0's bulk
 * site update starts with it) in a SiteAccess hold through the daemon's client and by `fetch`.
 *
 * BENCH_THREADS=1 also prints each phase in the daemon's process by thread (bench/support/thread-cpu.ts: the main thread,
 * V8's helpers (concurrent marking, sweeping, compilation), libuv's pool) and the main thread's garbage-collection
 * pauses (bench/support/gc-pauses.ts).
 *
 * BENCH_PHASES=verdict runs only the phases the target compares, the bulk update and the connector called directly
 * from a process of its own: shorter rounds, so more of them in the same time (BENCH_ROUNDS).
 *
 * BENCH_PROFILE=file.cpuprofile also writes a CPU profile of the last round's bulk update alone
 * (node:inspector; open it in Chrome's DevTools or read it with bench/lab/profile-summary.ts);
 * BENCH_PROFILE_US sets its sampling interval in µs (default 1000).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConnectedSite } from '../src/wordpress/site-access.js';
import { gcMark, pausesSince } from './support/gc-pauses.js';
import { threadsBetween, threadsNs } from './support/thread-cpu.js';
import { printSummary, verdict } from './support/summary.js';
import { memorySettings, unitMemoryOrRestarted } from './support/unit-memory.js';

const SITES = Number(process.env.BENCH_SITES ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const UPDATE_MS = Number(process.env.BENCH_UPDATE_MS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** Rounds run first and not counted (BENCH_WARMUP, default 1). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const PROFILE = process.env.BENCH_PROFILE;
/** Each phase in the daemon's process also by thread (BENCH_THREADS=1): the main thread, V8's workers, libuv's pool. */
const THREADS = process.env.BENCH_THREADS === '1';
/** Also measures the parts a bulk site update is made of (BENCH_PARTS=1): each request alone, through the daemon's client. */
const PARTS = process.env.BENCH_PARTS === '1';
/** The fake sites' connector version. */
const CONNECTOR = process.env.BENCH_CONNECTOR;
/** `verdict`: only the bulk update and the connector called directly from a process of its own. */
const PHASES = process.env.BENCH_PHASES ?? 'all';
if (PHASES !== 'all' && PHASES !== 'verdict') throw new Error('BENCH_PHASES is all or verdict');
const CONNECTIONS = process.env.BENCH_CONNECTIONS ?? 'fresh';
if (CONNECTIONS !== 'fresh' && CONNECTIONS !== 'open') throw new Error('BENCH_CONNECTIONS is fresh or open');
// The daemon as the systemd unit starts it (its young generation, glibc's arenas), before anything else.
unitMemoryOrRestarted();
/** The fake sites over HTTPS (BENCH_TLS=1), their certificate's authority trusted by the daemon and the direct caller. */
const TLS = process.env.BENCH_TLS === '1' ? (await import('./support/bench-tls.js')).trustedOrRestarted() : undefined;
/** Past every keep-alive timeout: the daemon's agents and fetch close idle connections after 4 s, the fake's server after 5 s. */
const KEEP_ALIVE_PAST_MS = 5_500;

/** CPU and time of a phase; `closedCpuMs` also counts its connections' closing when asked (else it is `cpuMs`). */
interface Measured {
  cpuMs: number;
  wallMs: number;
  closedCpuMs: number;
}

/** `untilClosed`: CPU is read again once the phase's connections have closed (each closes when idle, fresh ones). */
async function measure(work: () => Promise<void>, { untilClosed = false, name = '' } = {}): Promise<Measured> {
  // What ran before (the resets' syncs) settles first: its trailing work (sockets closed, events delivered) is not the next
  // phase's. With node --expose-gc its garbage is collected first too, and V8's helper threads finish sweeping after that
  // collection before the phase starts (process.cpuUsage counts every thread).
  await sleep(CONNECTIONS === 'fresh' ? KEEP_ALIVE_PAST_MS : 250);
  (globalThis as { gc?: () => void }).gc?.();
  await sleep(250);
  const threads = THREADS ? threadsNs() : null;
  const gc = gcMark();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - start;
  if (threads)
    console.log(
      `  ${name} by thread, ms per site update: ${threadsBetween(threads, threadsNs(), SITES)}; ` +
        `the main thread's collections: ${await pausesSince(gc, SITES)}`,
    );
  // Each site update's connection closes once idle (the work's last ones after the keep-alive): its close is the update's too.
  if (untilClosed) await sleep(KEEP_ALIVE_PAST_MS);
  const closed = process.cpuUsage(cpu);
  return {
    cpuMs: (used.user + used.system) / 1000,
    wallMs,
    closedCpuMs: (closed.user + closed.system) / 1000,
  };
}

async function main(): Promise<void> {
  const { startFakeFleet } = await import('./support/fake-fleet.js');
  const fleet = await startFakeFleet({ count: SITES, updateMs: UPDATE_MS, connector: CONNECTOR, tls: TLS });
  try {
    const { sites } = fleet;
    const { startInProcessDaemon } = await import('./support/in-process-daemon.js');
    const { EXPECTED_VERSION_CONNECTOR } = await import('../test/bulk-updates/updatable-fake.js');
    const expecting = (CONNECTOR ?? EXPECTED_VERSION_CONNECTOR) === EXPECTED_VERSION_CONNECTOR;
    // The request a bulk site update makes to update: with the version expected when the connector takes it.
    const updateBody = JSON.stringify({
      plugin: 'akismet/akismet.php',
      ...(expecting ? { expectedVersion: '1.1.0' } : {}),
    });
    // Both sides run at CONCURRENCY.
    const t = await startInProcessDaemon({ concurrency: CONCURRENCY });
    const { readEachSitesOffers, startDirectCaller, updateEachSite } = await import('./support/direct-caller.js');
    const caller = startDirectCaller();
    const ids = await t.connect(sites);
    const reset = async () => {
      await fleet.reset();
      await t.syncEach(ids);
      await fleet.requests(); // the syncs' are not a phase's
    };
    /** Requests the fake sites got per site update since the last reset. */
    const requestsPerUpdate = async () => (await fleet.requests()) / SITES;

    /** The bare baseline, from this process: one POST to the connector's update route per site, CONCURRENCY at a time. */
    const direct = () => updateEachSite({ sites, body: updateBody, concurrency: CONCURRENCY });
    /** One connector call per site in a SiteAccess hold (the daemon's client, credentials, queue), nothing stored after. */
    const held = (call: (site: ConnectedSite) => Promise<unknown>) => async () => {
      let next = 0;
      const worker = async () => {
        while (next < ids.length)
          await t.services.access.operate(ids[next++]!, call, { refresh: async () => undefined });
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    };
    /** The offers read by fetch, CONCURRENCY at a time. */
    const offersByFetch = () => readEachSitesOffers({ sites, concurrency: CONCURRENCY });
    /** The same updates through the single-site route (`POST /api/sites/{id}/plugins/akismet/update`), CONCURRENCY at a time. */
    const singleSite = async () => {
      let next = 0;
      const worker = async () => {
        while (next < ids.length) {
          const answer = await t.call('POST', `/api/sites/${ids[next++]!}/plugins/akismet/update`);
          if (answer.status !== 200) throw new Error(`single-site update: ${answer.status} ${answer.text}`);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    };
    let bulkId = '';
    const bulk = async () => void (bulkId = await t.updateAkismetEverywhere());

    /** The same update through the daemon's own client alone, in a SiteAccess hold: what the bulk machinery adds shows above it. */
    const ownClient = held((site) =>
      expecting
        ? site.connector.updateExpecting('plugin', 'akismet/akismet.php', '1.1.0')
        : site.connector.updatePlugin('akismet/akismet.php'),
    );

    console.log(
      `${SITES} fake sites (connector ${CONNECTOR ?? EXPECTED_VERSION_CONNECTOR}), concurrency ${CONCURRENCY}, ` +
        `${UPDATE_MS} ms per update on the site, ${CONNECTIONS} connections, ${TLS ? 'HTTPS' : 'plain HTTP'}; ` +
        `the daemon's memory settings: ${memorySettings()}`,
    );
    const rounds: Record<
      'bulk' | 'direct' | 'directIn' | 'own' | 'bulkClosed' | 'directClosed' | 'bulkWall' | 'directWall',
      number
    >[] = [];
    // Warm-up rounds first, not counted: each side's code compiled and its modules loaded before a figure is taken (the
    // direct caller's first calls load and compile fetch's: its first round cost twice the next ones, 2.8 against 1.4 ms).
    const all = PHASES === 'all';
    for (let round = 1 - WARMUP; round <= ROUNDS; round++) {
      await reset();
      // On open connections, the baseline's are opened just before (the reset's syncs left the daemon's open).
      let inProcess: Measured | null = null;
      if (all) {
        if (CONNECTIONS === 'open') await offersByFetch();
        await requestsPerUpdate(); // not the baseline's
        inProcess = await measure(direct, { name: "directly in the daemon's process" });
        await requestsPerUpdate();
        await reset();
      }
      // The same calls from a process of their own (the caller opens its connections to the sites first when they stay open).
      await sleep(CONNECTIONS === 'fresh' ? KEEP_ALIVE_PAST_MS : 250);
      const baseline = await caller.run({
        sites,
        body: updateBody,
        concurrency: CONCURRENCY,
        warm: CONNECTIONS === 'open',
        closeWaitMs: CONNECTIONS === 'fresh' ? KEEP_ALIVE_PAST_MS : 0,
      });
      // The caller's warming offers reads count too when the connections stay open: one request per site.
      const baselineRequests = (await requestsPerUpdate()) - (CONNECTIONS === 'open' ? 1 : 0);
      await reset();
      let own: Measured | null = null;
      let single: Measured | null = null;
      let singleRequests: number | null = null;
      if (all) {
        own = await measure(ownClient, { name: "the daemon's own client" });
        await reset();
        single = await measure(singleSite, { name: 'single-site route' });
        singleRequests = await requestsPerUpdate();
        await reset();
      }
      const profiler = PROFILE && round === ROUNDS ? new Session() : null;
      if (profiler) {
        profiler.connect();
        await profiler.post('Profiler.enable');
        // BENCH_PROFILE_US: the sampling interval (µs, default 1000): finer for a run of few sites.
        if (process.env.BENCH_PROFILE_US)
          await profiler.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_US) });
        await profiler.post('Profiler.start');
      }
      const measured = await measure(bulk, { untilClosed: CONNECTIONS === 'fresh', name: 'bulk' });
      await t.expectSucceeded(bulkId, sites.length);
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        writeFileSync(PROFILE!, JSON.stringify(profile));
        profiler.disconnect();
      }
      const bulkRequests = await requestsPerUpdate();
      if (PARTS) {
        await reset();
        const offersHeld = await measure(held((site) => site.connector.updatesIfAvailable()));
        const offersFetched = await measure(offersByFetch);
        const per = (figure: { cpuMs: number }) => (figure.cpuMs / SITES).toFixed(2);
        console.log(
          `round ${round} parts, CPU per site: offers read held ${per(offersHeld)} ms, by fetch ${per(offersFetched)} ms`,
        );
      }
      if (round < 1) {
        console.log(
          `warm-up round (not counted): bulk ${(measured.cpuMs / SITES).toFixed(2)} ms, ` +
            `connector directly ${(baseline.cpuMs / SITES).toFixed(2)} ms per site update`,
        );
        continue;
      }
      rounds.push({
        bulk: measured.cpuMs,
        direct: baseline.cpuMs,
        directIn: inProcess?.cpuMs ?? NaN,
        own: own?.cpuMs ?? NaN,
        bulkClosed: measured.closedCpuMs,
        directClosed: baseline.closedCpuMs,
        bulkWall: measured.wallMs,
        directWall: baseline.wallMs,
      });
      const per = (figure: number) => (figure / SITES).toFixed(2);
      const against = (other: Measured | null, name: string) =>
        other
          ? `; ${name}: CPU ${per(other.cpuMs)} ms (bulk ${(measured.cpuMs / other.cpuMs).toFixed(2)}×), ` +
            `time ${per(other.wallMs)} ms (bulk ${(measured.wallMs / other.wallMs).toFixed(2)}×)`
          : '';
      console.log(
        `round ${round}: bulk: CPU per site update ${per(measured.cpuMs)} ms, time per site ${per(measured.wallMs)} ms` +
          `${against(baseline, 'connector directly')}${against(inProcess, "directly in the daemon's process")}` +
          `${against(own, "the daemon's own client")}${against(single, 'single-site route')}; ` +
          `requests per site update: bulk ${bulkRequests}, directly ${baselineRequests}` +
          (singleRequests === null ? '' : `, single-site ${singleRequests}`) +
          (CONNECTIONS === 'fresh'
            ? `; with the connections closed: bulk ${per(measured.closedCpuMs)} ms, connector directly ` +
              `${per(baseline.closedCpuMs)} ms (bulk ${(measured.closedCpuMs / baseline.closedCpuMs).toFixed(2)}×)`
            : ''),
      );
    }
    // Each phase's CPU swings between rounds (V8's and the loader's background threads count in it): the medians, and the
    // median of the rounds' own ratios (each round's two phases ran minutes apart at most, under the same conditions).
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const middle = sorted.length >> 1;
      return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    };
    const of = (phase: keyof (typeof rounds)[number]) => median(rounds.map((round) => round[phase])) / SITES;
    const ratio = (over: keyof (typeof rounds)[number], under: keyof (typeof rounds)[number]) =>
      median(rounds.map((round) => round[over] / round[under])).toFixed(2);
    const ratios = rounds.map((round) => (round.bulk / round.direct).toFixed(2)).join(', ');
    console.log(
      `median of ${ROUNDS} rounds (${CONNECTIONS} connections, ${TLS ? 'HTTPS' : 'plain HTTP'}, ${SITES} sites): ` +
        `bulk CPU per site update ${of('bulk').toFixed(2)} ms, connector directly ${of('direct').toFixed(2)} ms` +
        (all
          ? `, directly in the daemon's process ${of('directIn').toFixed(2)} ms, ` +
            `the daemon's own client ${of('own').toFixed(2)} ms (bulk ${ratio('bulk', 'own')}×)`
          : '') +
        `; bulk against directly, median of the rounds' ratios: CPU ${ratio('bulk', 'direct')}× (rounds: ${ratios}), ` +
        `time per site ${ratio('bulkWall', 'directWall')}× (${of('bulkWall').toFixed(2)} against ${of('directWall').toFixed(2)} ms)` +
        (CONNECTIONS === 'fresh'
          ? `; with the connections closed: bulk ${of('bulkClosed').toFixed(2)} ms, connector directly ` +
            `${of('directClosed').toFixed(2)} ms, median of the rounds' ratios ${ratio('bulkClosed', 'directClosed')}×`
          : ''),
    );
    const cpuRatio = Number(ratio('bulk', 'direct'));
    printSummary(
      `bulk-updates (${SITES} sites, ${TLS ? 'HTTPS' : 'plain HTTP'}, ${CONNECTIONS} connections, concurrency ${CONCURRENCY}, ` +
        `${UPDATE_MS} ms per update, median of ${ROUNDS} rounds)`,
      [
        {
          figure: 'daemon CPU per site update; baseline: the connector called directly',
          value: `${of('bulk').toFixed(2)} ms; median of the rounds' ratios ${cpuRatio.toFixed(2)}× (${ratios})`,
          baseline: `${of('direct').toFixed(2)} ms`,
          target: verdict('≤ 1.1×', cpuRatio <= 1.1),
        },
        ...(CONNECTIONS === 'fresh'
          ? [
              {
                figure: "the same, each connection's close counted",
                value: `${of('bulkClosed').toFixed(2)} ms; ${ratio('bulkClosed', 'directClosed')}×`,
                baseline: `${of('directClosed').toFixed(2)} ms`,
              },
            ]
          : []),
        {
          figure: 'time per site',
          value: `${of('bulkWall').toFixed(2)} ms; ${ratio('bulkWall', 'directWall')}×`,
          baseline: `${of('directWall').toFixed(2)} ms`,
        },
        ...(all
          ? [
              {
                figure: "CPU per site update; baseline: the daemon's own client alone (the machinery's share)",
                value: `${of('bulk').toFixed(2)} ms; ${ratio('bulk', 'own')}×`,
                baseline: `${of('own').toFixed(2)} ms`,
              },
            ]
          : []),
      ],
    );
    await t.close();
    caller.close();
  } finally {
    fleet.close();
  }
}

await main();
