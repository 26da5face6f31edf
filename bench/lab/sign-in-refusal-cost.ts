/**
 * What one refused sign-in costs the daemon's main thread (issue 33: the bursts of `npm run bench --
 * sign-in`): the hashing pool is kept full, so every POST /sign-in is refused before hashing (429
 * sign-in-busy); BENCH_REQUESTS (default 400) of them go through the app one after another
 * (`app.request`, no sockets), with and without `Accept-Encoding: gzip`, and `users.signIn` alone.
 * Prints the main thread's mean CPU time of each.
 *
 *   node --import tsx bench/lab/sign-in-refusal-cost.ts
 */
import { readFileSync } from 'node:fs';
import { createTrustedProxies } from '../../src/http/client-address.js';
import { passwordHasher } from '../../src/users/passwords.js';
import { createTestApp } from '../../test/support/test-app.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const t = createTestApp({ app: { trustedProxies: createTrustedProxies(['127.0.0.1']) } });
await t.services.users.create('alice', 'correct horse battery staple');

/** The main thread's CPU so far (ns; the hashing runs on other threads). */
const mainCpuNs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
let filler = 0;
/** Keeps the pool's one running hash and its 16 waiting ones busy (a top-up: about one refusal's cost, now and then). */
function fillPool() {
  while (passwordHasher.running + passwordHasher.waiting < 17)
    t.services.users.signIn('alice', `filler ${filler++}`, `192.0.2.${filler % 250}`).catch(() => undefined);
}

async function measure(label: string, one: (i: number) => Promise<unknown>) {
  fillPool();
  for (let i = 0; i < 50; i++) {
    fillPool();
    await one(i); // warm up
  }
  const cpu = mainCpuNs();
  const started = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    fillPool();
    await one(i);
  }
  const used = mainCpuNs() - cpu;
  console.log(
    `${label}: ${(used / 1e6 / REQUESTS).toFixed(3)} ms main-thread CPU, ${((performance.now() - started) / REQUESTS).toFixed(3)} ms wall per refusal`,
  );
}

const form = (i: number) => new URLSearchParams({ username: 'alice', password: `wrong guess ${i}` }).toString();
let address = 0;
const post = (i: number, headers: Record<string, string> = {}) =>
  Promise.resolve(
    t.app.request('/sign-in', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': `10.9.${(address >> 8) & 255}.${address++ & 255}`,
        ...headers,
      },
      body: form(i),
    }),
  ).then(async (response) => {
    if (response.status !== 429) throw new Error(`expected 429, got ${response.status}`);
    await response.arrayBuffer();
  });

for (let round = 0; round < 2; round++) {
  await measure('POST /sign-in, gzip', (i) => post(i, { 'accept-encoding': 'gzip, deflate' }));
  await measure('POST /sign-in, no gzip', (i) => post(i));
  await measure('users.signIn alone', (i) =>
    t.services.users.signIn('alice', `wrong ${i}`, `10.8.${(address >> 8) & 255}.${address++ & 255}`).then(
      () => {
        throw new Error('signed in');
      },
      () => undefined,
    ),
  );
}
await t.close();
process.exit(0);
