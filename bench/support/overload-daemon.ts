/**
 * The daemon's app for bench/overload.ts, in a process of its own (its event loop is what the bench
 * loads): the tests' app on an in-memory database with BENCH_SITES seeded sites (bench/support/fleet-seed.ts),
 * a signed-in user, served on a loopback port. Overload shedding is on with SITEWARDEN_OVERLOAD_LAG_MS
 * (500 by default), and the parent switches it off and on between phases (`{ shed: boolean }` over
 * IPC), so both are measured on the same data in the same run. Tells the parent `{ port, cookie, token }`.
 */
import { serve } from '@hono/node-server';
import { sampleEventLoopLag } from '../../src/http/overload.js';
import { createTestApp } from '../../test/support/test-app.js';
import { seedFleet } from './fleet-seed.js';

const SITES = Number(process.env.BENCH_SITES ?? 10_000);
const BOUND_MS = Number(process.env.SITEWARDEN_OVERLOAD_LAG_MS ?? 500);
const PASSWORD = 'benchmark password 0123';

const sampler = sampleEventLoopLag();
let shed = true;
const t = createTestApp({
  app: { overload: { boundMs: BOUND_MS, lag: { lagMs: () => (shed ? sampler.lagMs() : 0) } } },
});
const seededMs = seedFleet(t.database.sqlite, SITES);
await t.services.users.create('bench', PASSWORD);
const signIn = await t.app.request('/sign-in', {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ username: 'bench', password: PASSWORD }).toString(),
});
const cookie = /sw_session=[^;]+/.exec(signIn.headers.get('set-cookie') ?? '')![0];

// BENCH_TRACE=1: a line a second with the largest lag seen and what the API requests cost inside the daemon.
const trace = { maxLag: 0, api: [] as number[], statuses: new Map<number, number>() };
const fetchTraced: typeof t.app.fetch = async (request, ...rest) => {
  const started = performance.now();
  const response = await t.app.fetch(request, ...rest);
  if (request.url.includes('/api/')) trace.api.push(performance.now() - started);
  trace.statuses.set(response.status, (trace.statuses.get(response.status) ?? 0) + 1);
  return response;
};
if (process.env.BENCH_TRACE === '1') {
  setInterval(() => (trace.maxLag = Math.max(trace.maxLag, sampler.lagMs())), 20).unref();
  setInterval(() => {
    console.log(
      `  [daemon] max lag ${trace.maxLag.toFixed(0)} ms; api in-daemon ${trace.api.map((v) => v.toFixed(0)).join(',')} ms; statuses ${JSON.stringify([...trace.statuses])}`,
    );
    trace.maxLag = 0;
    trace.api = [];
    trace.statuses.clear();
  }, 1000).unref();
}

const server = serve(
  { fetch: process.env.BENCH_TRACE === '1' ? fetchTraced : t.app.fetch, hostname: '127.0.0.1', port: 0 },
  (info) => {
    process.send!({ port: info.port, cookie, token: t.readToken, seededMs });
  },
);
process.on('message', (message: { shed?: boolean; stop?: boolean }) => {
  if (message.stop) {
    server.close();
    sampler.stop();
    void t.close().then(() => process.exit(0));
    return;
  }
  shed = message.shed ?? shed;
  process.send!({ shed });
});
