/**
 * The daemon's service graph and HTTP app in the benchmark's own process, so its CPU can be read
 * phase by phase: loaded from `dist/` (the JavaScript systemd runs, built by `npm run build`), not
 * through tsx, whose transform adds a `__name` call for every function a module defines at run time
 * (about 5 % of a bulk update's CPU). A database file in a temporary directory (BENCH_DB=memory: in
 * memory), the services configured as the tests configure them, and the daemon's logger at `info`,
 * writing to a file there (as it writes to stdout under systemd). BENCH_SOURCE=ts loads `src/`
 * through tsx instead. BENCH_WAL_AUTOCHECKPOINT sets SQLite's automatic checkpoint, in pages of the
 * log (the daemon's is SQLite's default, 1000; 0: none). The heap's growth is limited as the daemon
 * limits it at start (src/shared/heap-growth.ts); the benches start themselves with the systemd unit's
 * memory settings (bench/support/unit-memory.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as AppModule from '../../src/app.js';
import type * as ConnectorModule from '../../src/connector/connector-package.js';
import type * as DatabaseModule from '../../src/db/database.js';
import type * as StateDbModule from '../../src/db/state-db.js';
import type * as ServicesModule from '../../src/services.js';
import type { ServiceConfig } from '../../src/services.js';
import type * as ClockModule from '../../src/shared/clock.js';
import type * as HeapGrowthModule from '../../src/shared/heap-growth.js';
import type * as LoggerModule from '../../src/shared/logger.js';
import { testServiceConfig } from '../../test/support/service-config.js';

const ROOT = join(import.meta.dirname, '../..');

/** `concurrency`: site operations and bulk site updates at once, per host as many as in all (every fake site is on 127.0.0.1). */
export async function startInProcessDaemon({ concurrency }: { concurrency: number }) {
  const config: Partial<ServiceConfig> = {
    siteConcurrency: concurrency,
    bulkUpdates: { concurrency, perHost: concurrency },
  };
  const built = process.env.BENCH_SOURCE !== 'ts';
  if (built && !existsSync(join(ROOT, 'dist/src/services.js'))) throw new Error('run `npm run build` first');
  const from = (module: string) => join(ROOT, built ? `dist/src/${module}.js` : `src/${module}.ts`);
  // Each module from dist/ (or src/), typed as its source.
  const load = <M>(module: string) => import(from(module)) as Promise<M>;
  const [database, stateDb, services, app, logging, clock, connector, heap] = await Promise.all([
    load<typeof DatabaseModule>('db/database'),
    load<typeof StateDbModule>('db/state-db'),
    load<typeof ServicesModule>('services'),
    load<typeof AppModule>('app'),
    load<typeof LoggerModule>('shared/logger'),
    load<typeof ClockModule>('shared/clock'),
    load<typeof ConnectorModule>('connector/connector-package'),
    load<typeof HeapGrowthModule>('shared/heap-growth'),
  ]);
  // As `sitewarden start` does first: the old generation grows to twice what is alive before the next full collection.
  heap.limitHeapGrowth();
  const { pino } = await import('pino');

  const logDir = mkdtempSync(join(tmpdir(), 'bench-daemon-'));
  const logger = logging.createLogger({
    level: 'info',
    destination: pino.destination({ dest: join(logDir, 'daemon.log') }),
  });
  // A database file as the daemon keeps one (WAL, synchronous NORMAL): every commit is a write to its log, which an
  // in-memory database leaves out (BENCH_DB=memory: about 0.15 ms less a bulk site update, bench/bulk-machinery.ts).
  const file = process.env.BENCH_DB === 'memory' ? ':memory:' : join(logDir, 'sitewarden.db');
  const handle = database.openDatabase(file);
  const { sqlite, close } = handle;
  if (process.env.BENCH_WAL_AUTOCHECKPOINT)
    sqlite.pragma(`wal_autocheckpoint = ${Number(process.env.BENCH_WAL_AUTOCHECKPOINT)}`);
  const graph = services.createServices({
    // As the tests configure the services, with the benchmark's changes.
    config: { ...testServiceConfig, dataDir: logDir, ...config },
    state: stateDb.sqliteStateOf(handle),
    logger,
    events: logging.createLoggedEvents(logger),
    clock: clock.systemClock,
    secretKey: randomBytes(32),
  });
  const http = app.createApp({
    ...graph,
    connectorZipPath: connector.defaultConnectorZipPath(),
    logger,
    version: 'bench',
    checkDatabase: () => true,
  });
  const token = (await graph.tokens.create('bench', 'write')).token;

  /** A request to the API as the server would route it, with a write token; the answer's JSON read. */
  async function call(method: string, path: string, init: { json?: unknown } = {}) {
    const response = await http.request(path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the benchmarks read a few fields of arbitrary answers
    const json: any = text ? JSON.parse(text) : undefined;
    return { status: response.status, text, json };
  }

  return {
    services: graph,
    /** The database file (`:memory:` with BENCH_DB=memory). */
    databaseFile: file,
    built,
    call,
    /** Connects each site through the API; their ids, in order. */
    async connect(sites: { url: string; username: string; applicationPassword: string }[]): Promise<string[]> {
      const ids: string[] = [];
      for (const site of sites) {
        const connected = await call('POST', '/api/sites', { json: site });
        if (connected.status !== 201) throw new Error(`connect: ${connected.status} ${connected.text}`);
        ids.push(connected.json.id as string);
      }
      return ids;
    },
    /** Syncs each site in turn (after the fakes were reset: their offers back in the inventory). */
    async syncEach(ids: string[]): Promise<void> {
      for (const id of ids) await graph.sync.syncNow(id);
    },
    /** One bulk update of the akismet plugin on every site, waited for; its job's id (checked apart, by `expectSucceeded`). */
    async updateAkismetEverywhere(): Promise<string> {
      const queued = await call('POST', '/api/fleet/updates/apply', {
        json: { all: true, items: [{ type: 'plugin', slug: 'akismet' }] },
      });
      if (queued.status !== 202) throw new Error(`apply: ${queued.status} ${queued.text}`);
      await graph.bulkUpdates.idle();
      return queued.json.job.id as string;
    },
    /** Throws unless the bulk update `jobId` updated `sites` sites (read after the measured phase: not its cost). */
    async expectSucceeded(jobId: string, sites: number): Promise<void> {
      const run = await graph.bulkUpdates.run(jobId);
      if (run.progress.succeeded !== sites) throw new Error(`bulk: ${JSON.stringify(run.progress)}`);
    },
    async close() {
      await graph.webhookDispatcher.stop();
      await graph.http.close();
      close();
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}
