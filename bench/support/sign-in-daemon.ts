/**
 * The daemon's app for bench/sign-in.ts, in a process of its own (its event loop and its thread pool
 * are what the bench loads): the tests' app on an in-memory database with BENCH_SITES seeded sites
 * (bench/support/fleet-seed.ts) and a user `alice`, served on a loopback port that trusts itself as a
 * proxy, so each wrong sign-in can come from an address of its own (X-Forwarded-For): the worst case
 * for the hashing pool, the per-address throttle never stepping in. Tells the parent `{ port, token }`.
 */
import { serve } from '@hono/node-server';
import { createTrustedProxies } from '../../src/http/client-address.js';
import { createTestApp } from '../../test/support/test-app.js';
import { seedFleet } from './fleet-seed.js';

const SITES = Number(process.env.BENCH_SITES ?? 1_000);
const t = createTestApp({ app: { trustedProxies: createTrustedProxies(['127.0.0.1']) } });
seedFleet(t.database.sqlite, SITES);
await t.services.users.create('alice', 'correct horse battery staple');

const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.send!({ port: info.port, token: t.readToken });
});
process.on('message', () => {
  server.close();
  void t.close().then(() => process.exit(0));
});
