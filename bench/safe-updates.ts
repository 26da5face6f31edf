/**
 * Safe updates against a real test WordPress site, in one run, with the daemon's services in
 * process (as the tests build them):
 *   - a plain update of sitewarden-demo 1.0.0 → 1.1.0 against a safe update of the same plugin on
 *     the same site (its phases: checks, screenshots, restore point, update, after-checks);
 *   - the restore point (the saved previous version) against a full backup of the unchanged site
 *     (target: ≤ 10 %);
 *   - a plugin whose new version ends every request in a fatal error: the time from the first
 *     failed answer of the home page to its first 200 again, polled every 100 ms (target ≤ 60 s).
 * Not run by the tests. Usage (figures in docs/benchmarks.md):
 *
 *   node --import tsx bench/safe-updates.ts
 *   BENCH_RUNS=3 node --import tsx bench/safe-updates.ts
 */
import { cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startPrivateMariaDb } from '../test/support/mariadb.js';
import { startPluginMirror } from '../test/support/plugin-mirror.js';
import { createTestApp } from '../test/support/test-app.js';
import { printSummary, verdict, type SummaryRow } from './support/summary.js';
import { FIXTURES_DIR } from '../test/support/wordpress/paths.js';
import { provisionTestSite, type TestSite } from '../test/support/wordpress/test-site.js';
import { createRunDir, removeRunDir } from '../test/support/work-dir.js';

const ROOT = resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function installFixture(site: TestSite, slug: string, version: string): void {
  const target = join(site.root, 'wp-content/plugins', slug);
  rmSync(target, { recursive: true, force: true });
  cpSync(join(FIXTURES_DIR, 'directory/plugins', slug, version, slug), target, { recursive: true });
}

/** Watches the home page every 100 ms: when it first failed, and when it answered 200 again after that. */
function watchHome(url: string) {
  let firstFailure: number | null = null;
  let recovered: number | null = null;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const status = await fetch(`${url}/`, { signal: AbortSignal.timeout(10_000) })
        .then(async (response) => (await response.arrayBuffer(), response.status))
        .catch(() => 0);
      const now = performance.now();
      if (status !== 200 && firstFailure === null) firstFailure = now;
      if (status === 200 && firstFailure !== null && recovered === null) recovered = now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { firstFailure, recovered };
    },
  };
}

async function main() {
  const runDir = createRunDir();
  const db = await startPrivateMariaDb({ dir: runDir });
  const mirror = await startPluginMirror({
    fixturesDir: join(FIXTURES_DIR, 'directory'),
    zipDir: join(runDir, 'mirror'),
    forks: [],
  });
  const site = await provisionTestSite({
    mariadbSocket: db.socketPath,
    pluginMirrorUrl: mirror.url,
    testWorkDir: runDir,
  });
  const t = createTestApp({ config: { dataDir: join(runDir, 'data') } });
  try {
    cpSync(join(ROOT, 'connector'), join(site.root, 'wp-content/plugins/sitewarden-connector'), { recursive: true });
    await site.php(
      `require_once ABSPATH . 'wp-admin/includes/plugin.php'; activate_plugin('sitewarden-connector/sitewarden-connector.php');`,
    );
    const connected = await t.call('POST', '/api/sites', {
      json: { url: site.url, username: site.admin.username, applicationPassword: site.admin.applicationPassword },
    });
    const siteId = connected.json.id as string;
    const { plugins, safeUpdates, backups } = t.services;
    const fresh = async (slug: string) => {
      installFixture(site, slug, '1.0.0');
      await site.php("delete_site_transient('update_plugins');");
      await plugins.activate(siteId, slug);
    };

    const rows: SummaryRow[] = [];
    for (let run = 1; run <= RUNS; run++) {
      await fresh('sitewarden-demo');
      let started = performance.now();
      await plugins.update(siteId, 'sitewarden-demo');
      const plain = performance.now() - started;

      await fresh('sitewarden-demo');
      started = performance.now();
      const safe = await safeUpdates.safeUpdate(
        { siteId, type: 'plugin', slug: 'sitewarden-demo' },
        new AbortController().signal,
      );
      const total = performance.now() - started;
      const step = (name: string) => safe.steps.find((entry) => entry.step === name)?.durationMs ?? NaN;
      const checks = (reports: { durationMs: number }[]) => reports.reduce((sum, report) => sum + report.durationMs, 0);
      console.log(`run ${run}: plain update ${seconds(plain)}; safe update ${seconds(total)} (${safe.status})`);
      console.log(
        `  before-check ${seconds(checks(safe.before))}, screenshots before ${seconds(step('screenshots-before'))}, restore point ${seconds(step('restore-point'))}, update ${seconds(step('update'))}, after-checks ${seconds(checks(safe.after))} (+ settle ${seconds(safe.policy.settleMs)}), screenshots after ${seconds(step('screenshots-after'))}`,
      );

      started = performance.now();
      backups.request(siteId);
      await backups.idle();
      const backup = performance.now() - started;
      const point = step('restore-point');
      console.log(
        `  full backup of the unchanged site ${seconds(backup)}; restore point ${seconds(point)} = ${((point / backup) * 100).toFixed(1)} % of it (target ≤ 10 %)`,
      );

      await fresh('sitewarden-fatal');
      const watch = watchHome(site.url);
      const fatal = await safeUpdates.safeUpdate(
        {
          siteId,
          type: 'plugin',
          slug: 'sitewarden-fatal',
          policy: { visual: { enabled: false, threshold: 0.03, rollback: false } },
        },
        new AbortController().signal,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { firstFailure, recovered } = await watch.stop();
      console.log(
        `  fatal update: ${fatal.status} (${fatal.reason}); first failed answer to 200 again: ${firstFailure && recovered ? seconds(recovered - firstFailure) : 'not observed'} (target ≤ 60 s); after-checks ${fatal.after.length} × (settle ${seconds(fatal.policy.settleMs)}, retry ${seconds(fatal.policy.retryDelayMs)}), rollback ${seconds(fatal.steps.find((entry) => entry.step === 'rollback')?.durationMs ?? NaN)}`,
      );
      const healed = firstFailure && recovered ? recovered - firstFailure : undefined;
      rows.push(
        {
          figure: `run ${run}: safe update; baseline: a plain update of the same plugin`,
          value: `${seconds(total)} (${safe.status})`,
          baseline: seconds(plain),
        },
        {
          figure: `run ${run}: restore point; baseline: a full backup of the unchanged site`,
          value: `${seconds(point)}, ${((point / backup) * 100).toFixed(1)} %`,
          baseline: seconds(backup),
          target: verdict('≤ 10 %', point / backup <= 0.1),
        },
        {
          figure: `run ${run}: fatal update, first failed answer to 200 again`,
          value: healed === undefined ? 'not observed' : seconds(healed),
          target: verdict('≤ 60 s', healed !== undefined && healed <= 60_000),
        },
      );
    }
    printSummary(`safe-updates (${RUNS} run${RUNS === 1 ? '' : 's'})`, rows);
  } finally {
    await t.close();
    await site.stop();
    await mirror.close();
    await db.stop();
    removeRunDir(runDir);
  }
}

await main();
