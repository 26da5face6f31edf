/**
 * The inventory refresh of 10,000 fake, fast sites: one loopback server (a child process, so its
 * CPU is not counted) answers every site's WordPress and connector 1.4.0 routes at once, and the
 * daemon's sync (site access, zod checks, inventory rows, first sightings) reads them all at the
 * default concurrency (SITEWARDEN_SITE_CONCURRENCY=4). Baseline in the same run: the same four GETs
 * per site with fetch and JSON.parse at the same concurrency, nothing checked or stored.
 *
 *   node --import tsx bench/inventory-refresh.ts
 *   BENCH_SITES=1000 node --import tsx bench/inventory-refresh.ts
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createTestApp, insertConnectedSite } from '../test/support/test-app.js';
import { printSummary } from './support/summary.js';

const SITES = Number(process.env.BENCH_SITES ?? 10_000);
const CONCURRENCY = 4;

/** Thirty plugins (six behind, two with requirements), three themes, a core and a language offer. */
function answers(): Record<string, string> {
  const plugins = Array.from({ length: 30 }, (_, i) => ({
    plugin: `plugin-${i}/plugin-${i}`,
    status: i % 3 ? 'active' : 'inactive',
    name: `Plugin ${i}`,
    version: i % 5 === 0 ? '1.0.0' : '2.0.0',
  }));
  const themes = ['one', 'two', 'three'].map((name, i) => ({
    stylesheet: `theme-${name}`,
    template: `theme-${name}`,
    status: i === 0 ? 'active' : 'inactive',
    name: { raw: `Theme ${name}` },
    version: '1.0',
  }));
  const offers = Object.fromEntries(
    plugins
      .filter((_, i) => i % 5 === 0)
      .map((p, i) => [`${p.plugin}.php`, { slug: `plugin-${i * 5}`, version: '1.0.0', newVersion: '2.0.0' }]),
  );
  return {
    'wp/v2/plugins': JSON.stringify(plugins),
    'wp/v2/themes': JSON.stringify(themes),
    'sitewarden/v1/info': JSON.stringify({
      connector: '1.4.0',
      features: ['updates', 'plugins/update', 'themes', 'backups', 'restore', 'plugins/status', 'core', 'translations'],
      wordpress: '6.5.3',
      php: '8.2.1',
      multisite: false,
      filesystem: 'direct',
      capabilities: {},
      timezone: { string: 'Europe/Berlin', gmtOffset: 1 },
      database: { type: 'mariadb', version: '10.11.6' },
    }),
    'sitewarden/v1/updates': JSON.stringify({
      checkedAt: new Date().toISOString(),
      plugins: offers,
      themes: { 'theme-two': { version: '1.0', newVersion: '1.1' } },
      requires: { 'plugin-1/plugin-1.php': ['plugin-2'], 'plugin-3/plugin-3.php': ['plugin-2', 'plugin-4'] },
      core: [{ version: '6.5.5' }, { version: '6.6.1' }],
      translations: [{ type: 'plugin', slug: 'plugin-0', language: 'de_DE', version: '2.0.0' }],
    }),
  };
}

/** The child: every `/s<n>/wp-json/<route>` answered from memory. */
function serve() {
  const bodies = answers();
  const server = createServer((req, res) => {
    const route = (req.url ?? '').split('?')[0]!.replace(/^\/s\d+\/wp-json\//, '');
    const body = bodies[route];
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(body ?? '{"code":"rest_no_route"}');
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
  });
}

async function pool(count: number, work: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

function measure<T>(run: () => Promise<T>) {
  return async () => {
    const cpu = process.cpuUsage();
    const start = performance.now();
    await run();
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
  };
}

async function main() {
  const child = fork(import.meta.filename, ['--serve'], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const base = `http://127.0.0.1:${port}`;
  const t = createTestApp({ config: { siteConcurrency: CONCURRENCY } });
  try {
    const ids = Array.from({ length: SITES }, (_, s) =>
      insertConnectedSite(t, { url: `${base}/s${s}`, restUrl: `${base}/s${s}/wp-json/` }),
    );

    const baseline = await measure(() =>
      pool(SITES, async (s) => {
        await Promise.all(
          ['wp/v2/plugins?context=edit', 'wp/v2/themes?context=edit', 'sitewarden/v1/info'].map(async (route) =>
            JSON.parse(await (await fetch(`${base}/s${s}/wp-json/${route}`)).text()),
          ),
        );
        JSON.parse(await (await fetch(`${base}/s${s}/wp-json/sitewarden/v1/updates`)).text());
      }),
    )();

    const refresh = await measure(async () => {
      const before = t.services.siteQueue.completed;
      const queued = t.services.sync.enqueue(ids);
      while (t.services.siteQueue.completed - before < queued) await new Promise((r) => setTimeout(r, 20));
    })();
    const found = await Promise.all(ids.map((id) => t.services.sitesRepository.findById(id)));
    const failed = found.filter((site) => site?.syncError).length;
    const rows = t.database.sqlite.prepare('select count(*) as n from update_offers').get() as { n: number };

    const line = (name: string, r: { ms: number; cpuMs: number }) =>
      `${name.padEnd(34)} total ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${((SITES / r.ms) * 1000).toFixed(0).padStart(5)} sites/s  CPU ${(r.cpuMs / SITES).toFixed(3)} ms/site`;
    console.log(`inventory refresh, ${SITES} sites, concurrency ${CONCURRENCY}, ${new Date().toISOString()}`);
    console.log(line('baseline (4 GETs + JSON.parse)', baseline));
    console.log(line('sync (SiteAccess, zod, rows)', refresh));
    console.log(
      `CPU ratio sync/baseline ${(refresh.cpuMs / baseline.cpuMs).toFixed(2)}×, failed syncs ${failed}, offers stored ${rows.n}`,
    );
    console.log(
      `at the default 12-hour interval: ${(SITES / (12 * 60)) | 0} syncs a minute, about ${((refresh.cpuMs / SITES) * (SITES / (12 * 3600))).toFixed(2)} ms CPU per second`,
    );
    const figures = (r: { ms: number; cpuMs: number }) =>
      `${(r.ms / 1000).toFixed(1)} s, ${(r.cpuMs / SITES).toFixed(3)} ms CPU a site`;
    printSummary(`inventory-refresh (${SITES} sites, concurrency ${CONCURRENCY})`, [
      {
        figure: 'whole refresh; baseline: the same four GETs + JSON.parse, nothing checked or stored',
        value: `${figures(refresh)}; CPU ${(refresh.cpuMs / baseline.cpuMs).toFixed(2)}×`,
        baseline: figures(baseline),
      },
      { figure: 'failed syncs, offers stored', value: `${failed}, ${rows.n}` },
    ]);
  } finally {
    await t.close();
    child.kill();
  }
}

if (process.argv.includes('--serve')) serve();
else await main();
