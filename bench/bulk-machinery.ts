/**
 * The bulk machinery's own CPU per site update, without the network: the connector's answer to the
 * update is canned (the real answer of a fake site, captured once), so a bulk update
 * (`POST /api/fleet/updates/apply`) costs only what the daemon does around the request (job rows,
 * history, inventory patch, events, queues, credentials, the answer checked). Beside it, the same
 * update through the daemon's own client alone (a SiteAccess hold, nothing stored), with the same
 * canned answer. Each update answers after BENCH_WAIT_MS (0: at once, the sites' steps run back to
 * back; a real update takes seconds, so each site's steps run apart, on a CPU whose caches other
 * work has had). The daemon is the built one, in this process (bench/support/in-process-daemon.ts); the
 * fake sites (bench/support/fake-fleet.ts) serve the syncs between rounds, in a child process. Not run by the tests.
 *
 *   npm run build && node --expose-gc --import tsx bench/bulk-machinery.ts
 *   BENCH_SITES=500 BENCH_WAIT_MS=0 node --expose-gc --import tsx bench/bulk-machinery.ts
 *
 * CPU is the process's (process.cpuUsage, V8's helper threads included) and the main thread's
 * alone (/proc/self/task/<pid>/schedstat), medians over BENCH_ROUNDS. Each phase starts once the
 * connections the reset's syncs left open have closed. BENCH_PROFILE=file.cpuprofile
 * also writes a CPU profile of the last round's bulk update (read it with bench/lab/profile-summary.ts;
 * BENCH_PROFILE_US sets the sampling interval, default 200 µs). BENCH_STATEMENTS=1 also lists the SQL
 * statements of the last round's bulk update: how many a site update runs, and the time each takes
 * (timed around better-sqlite3's run/get/all, so the bulk's own figure that round is a little dearer),
 * the statements prepared meanwhile, and the pages its commits wrote to the write-ahead log by table
 * and index (read from the log's frames; with BENCH_WAL_AUTOCHECKPOINT=0, or a checkpoint may have
 * started the log over). BENCH_THREADS=1 also prints each phase's CPU per thread (the main thread,
 * V8's workers, libuv's pool). The daemon runs with the systemd unit's memory settings
 * (bench/support/unit-memory.ts: the bench starts itself again with them; BENCH_UNIT_MEMORY=0: the defaults).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SiteHttp, SiteResponse } from '../src/wordpress/site-http.js';
import { startFakeFleet } from './support/fake-fleet.js';
import Database from 'better-sqlite3';
import { threadsBetween, threadsNs } from './support/thread-cpu.js';
import { timeStatements } from './support/statement-times.js';
import { printSummary } from './support/summary.js';
import { memorySettings, unitMemoryOrRestarted } from './support/unit-memory.js';

const SITES = Number(process.env.BENCH_SITES ?? 500);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const WAIT_MS = Number(process.env.BENCH_WAIT_MS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const UPDATE_ROUTE = 'sitewarden/v1/plugins/update';

/** Where the write-ahead log stands: its length and its salt (a checkpoint that starts the log over changes the salt). */
function walMark(file: string): { bytes: number; salt: string } {
  if (!existsSync(`${file}-wal`)) return { bytes: 0, salt: '' };
  const wal = readFileSync(`${file}-wal`);
  return { bytes: wal.length, salt: wal.length >= 32 ? wal.subarray(16, 24).toString('hex') : '' };
}

/**
 * Which tables and indexes the frames the log gained since `from` hold (BENCH_STATEMENTS=1): pages per site update by
 * b-tree. Only the frames of the log's current salt count (a frame left from before a restart of the log is not
 * this work's); from the log's start when it started over meanwhile, so run it with BENCH_WAL_AUTOCHECKPOINT=0 for
 * every frame.
 */
function walPages(file: string, from: { bytes: number; salt: string }, sites: number): string {
  const wal = readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salt = wal.subarray(16, 24);
  const start = salt.toString('hex') === from.salt ? Math.max(32, from.bytes) : 32;
  const pages = new Map<number, number>();
  let commits = 0;
  for (let at = start; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (!wal.subarray(at + 8, at + 16).equals(salt)) continue;
    const page = wal.readUInt32BE(at);
    pages.set(page, (pages.get(page) ?? 0) + 1);
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  const reader = new Database(file, { readonly: true });
  const names = new Map(
    (reader.prepare('select name, pageno from dbstat').all() as { name: string; pageno: number }[]).map((row) => [
      row.pageno,
      row.name,
    ]),
  );
  reader.close();
  const byName = new Map<string, number>();
  for (const [page, frames] of pages) {
    // Page 1 holds the database's header (its size, its free list) and the start of sqlite_schema.
    const name = page === 1 ? 'page 1 (header)' : (names.get(page) ?? 'free');
    byName.set(name, (byName.get(name) ?? 0) + frames);
  }
  const frames = [...pages.values()].reduce((sum, count) => sum + count, 0);
  return (
    `log frames: ${(frames / sites).toFixed(1)} a site update in ${(commits / sites).toFixed(2)} commits: ` +
    [...byName]
      .sort((a, b) => b[1] - a[1])
      .map(([name, count]) => `${name} ${(count / sites).toFixed(2)}`)
      .join(', ')
  );
}

const mainThreadNs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);

/**
 * Past the daemon's keep-alive (its agents close a connection after 4 s idle): the reset's syncs leave one open to
 * each site, and their closing would fall inside a phase that lasts longer than that (at 300 sites, answers after
 * 200 ms, it doubled the own-client phase's figure: docs/benchmarks.md, session 11).
 */
const KEEP_ALIVE_PAST_MS = 4_500;

async function measure(work: () => Promise<void>): Promise<{ all: number; main: number }> {
  await sleep(KEEP_ALIVE_PAST_MS);
  (globalThis as { gc?: () => void }).gc?.();
  await sleep(100);
  const threads = process.env.BENCH_THREADS === '1' ? threadsNs() : null;
  const cpu = process.cpuUsage();
  const main = mainThreadNs();
  await work();
  const used = process.cpuUsage(cpu);
  const mainUsed = mainThreadNs() - main;
  if (threads)
    console.log(
      `  ${work.name || 'bulk'} by thread, ms per site update: ${threadsBetween(threads, threadsNs(), SITES)}`,
    );
  return { all: (used.user + used.system) / 1000 / SITES, main: mainUsed / 1e6 / SITES };
}

// The daemon as the systemd unit starts it (its young generation, glibc's arenas), before anything else.
unitMemoryOrRestarted();
console.log(`the daemon's memory settings: ${memorySettings()}`);
const fleet = await startFakeFleet({ count: SITES, updateMs: 0 });
try {
  const { startInProcessDaemon } = await import('./support/in-process-daemon.js');
  const t = await startInProcessDaemon({ concurrency: CONCURRENCY });
  const ids = await t.connect(fleet.sites);
  // The log's pages, read from its file (none with BENCH_DB=memory).
  const onDisk = t.databaseFile !== ':memory:';
  const reset = async () => {
    await fleet.reset();
    await t.syncEach(ids);
  };

  // The update route's answer, captured from a real one; every later update gets it after WAIT_MS.
  const http: SiteHttp = t.services.http;
  const request = http.request.bind(http);
  let canned: SiteResponse | undefined;
  http.request = async (req) => {
    const answer = await request(req);
    if (req.url.includes(UPDATE_ROUTE)) canned = answer;
    return answer;
  };
  await reset();
  await (
    await t.services.access.connected(ids[0]!)
  ).connector.updateExpecting('plugin', 'akismet/akismet.php', '1.1.0');
  if (!canned) throw new Error('no update answer was captured');
  const answer = canned;
  http.request = async (req) => {
    if (!req.url.includes(UPDATE_ROUTE)) return request(req);
    if (WAIT_MS > 0) await sleep(WAIT_MS);
    return { ...answer };
  };

  const ownClient = async () => {
    let next = 0;
    const worker = async () => {
      while (next < ids.length)
        await t.services.access.operate(
          ids[next++]!,
          (site) => site.connector.updateExpecting('plugin', 'akismet/akismet.php', '1.1.0'),
          { refresh: async () => undefined },
        );
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  let bulkId = '';
  const bulk = async () => void (bulkId = await t.updateAkismetEverywhere());

  const figures: { own: { all: number; main: number }; bulk: { all: number; main: number } }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await reset();
    const own = await measure(ownClient);
    await reset();
    const profiler = process.env.BENCH_PROFILE && round === ROUNDS ? new Session() : null;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_US ?? 200) });
      await profiler.post('Profiler.start');
    }
    const statements = process.env.BENCH_STATEMENTS === '1' && round === ROUNDS ? timeStatements() : null;
    const walBefore = statements && onDisk ? walMark(t.databaseFile) : null;
    const measured = await measure(bulk);
    statements?.report(SITES);
    // With BENCH_WAL_AUTOCHECKPOINT=0 the log only grows: what the bulk wrote to it.
    if (walBefore) {
      console.log(walPages(t.databaseFile, walBefore, SITES));
      console.log(
        `write-ahead log: ${((walMark(t.databaseFile).bytes - walBefore.bytes) / 1024 / SITES).toFixed(1)} KiB a ` +
          `site update (its growth; less than was written when a checkpoint let SQLite start the log over)`,
      );
    }
    await t.expectSucceeded(bulkId, SITES);
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
      profiler.disconnect();
    }
    figures.push({ own, bulk: measured });
    console.log(
      `round ${round}: bulk ${measured.all.toFixed(3)} ms (main thread ${measured.main.toFixed(3)}), ` +
        `own client ${own.all.toFixed(3)} ms (main thread ${own.main.toFixed(3)})`,
    );
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const of = (phase: 'own' | 'bulk', thread: 'all' | 'main') => median(figures.map((round) => round[phase][thread]));
  console.log(
    `${SITES} sites, concurrency ${CONCURRENCY}, answers after ${WAIT_MS} ms, median of ${ROUNDS} rounds, CPU per site update: ` +
      `bulk ${of('bulk', 'all').toFixed(3)} ms (main thread ${of('bulk', 'main').toFixed(3)}), ` +
      `the daemon's own client ${of('own', 'all').toFixed(3)} ms (main thread ${of('own', 'main').toFixed(3)}); ` +
      `the machinery ${(of('bulk', 'all') - of('own', 'all')).toFixed(3)} ms (main thread ${(of('bulk', 'main') - of('own', 'main')).toFixed(3)})`,
  );
  const ms = (value: number) => `${value.toFixed(3)} ms`;
  printSummary(
    `bulk-machinery (${SITES} sites, concurrency ${CONCURRENCY}, answers after ${WAIT_MS} ms, median of ${ROUNDS} rounds)`,
    [
      {
        figure: "CPU per site update; baseline: the daemon's own client alone",
        value: `${ms(of('bulk', 'all'))} (main thread ${ms(of('bulk', 'main'))})`,
        baseline: `${ms(of('own', 'all'))} (main thread ${ms(of('own', 'main'))})`,
      },
      {
        figure: 'the machinery (the difference)',
        value: `${ms(of('bulk', 'all') - of('own', 'all'))} (main thread ${ms(of('bulk', 'main') - of('own', 'main'))})`,
      },
    ],
  );
  await t.close();
} finally {
  fleet.close();
}
