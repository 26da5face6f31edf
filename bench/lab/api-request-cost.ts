/**
 * What one API request costs in the daemon's own code, with no network: the whole app (real
 * services, an in-memory database of BENCH_SITES sites) called through `app.request()`, a route at a
 * time, BENCH_REQUESTS each after a warm-up. Run with `--cpu-prof --cpu-prof-dir DIR` and read the
 * profile with bench/lab/profile-summary.ts.
 *
 *   node --import tsx bench/lab/api-request-cost.ts
 */
import { createTestApp, insertConnectedSite } from '../../test/support/test-app.js';

const SITES = Number(process.env.BENCH_SITES ?? 200);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const t = createTestApp();
const ids: string[] = [];
for (let i = 0; i < SITES; i++) ids.push(insertConnectedSite(t));

async function measure(name: string, path: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) await t.call('GET', path());
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const answer = await t.call('GET', path());
    if (answer.status !== 200) throw new Error(`${name}: ${answer.status}`);
  }
  const used = process.cpuUsage(cpu);
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(
    `${name.padEnd(28)} ${((used.user + used.system) / 1000 / REQUESTS).toFixed(3)} ms CPU, ${(wall / REQUESTS).toFixed(3)} ms wall a request`,
  );
}

await measure('GET /api/health', () => '/api/health');
await measure('GET /api/sites?limit=50', () => '/api/sites?limit=50');
let n = 0;
await measure('GET /api/sites/{id}', () => `/api/sites/${ids[n++ % ids.length]}`);
await t.close();
