/**
 * CPU per new HTTPS connection: the daemon's outgoing agents (src/shared/outgoing-http.ts: one TLS
 * context for every connection) against an agent that builds a context per connection (Node's
 * default, what they did before), with and without the TLS sessions kept to resume a host's next
 * connection (the sites' agents keep none, the webhooks' do); and the uptime prober's way (no agent:
 * a fresh connection per probe) with and without a shared context. Each request is a GET answered with a small body on a
 * new connection (`connection: close`), BENCH_CONCURRENCY at a time, to a loopback HTTPS server in a
 * child process (its CPU is not counted) with a certificate from an authority made for the run
 * (bench/support/bench-tls.ts) and no session resumption: each connection makes a full handshake. The
 * variants take turns, BENCH_ROUNDS rounds of BENCH_REQUESTS requests each; the medians are printed.
 *
 *   node --import tsx bench/tls-connections.ts
 */
import { fork } from 'node:child_process';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import { createOutgoingAgents, discardBody, sendRequest } from '../src/shared/outgoing-http.js';
import { startFakeSite } from '../test/support/fake-wordpress/loopback-server.js';
import { trustedOrRestarted } from './support/bench-tls.js';
import { printSummary } from './support/summary.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

const tls = trustedOrRestarted();

if (process.argv[2] === 'serve') {
  const site = await startFakeSite((_req, res) => res.end('{"ok":true}'), { tls });
  process.send!(site.url);
} else {
  const server = fork(import.meta.filename, ['serve'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const url = new URL(await new Promise<string>((resolve) => server.once('message', (m) => resolve(String(m)))));
  const headers = { connection: 'close' };

  /** One request through `agents` (the daemon's sendRequest), its answer read. */
  const throughAgents = (agents: ReturnType<typeof createOutgoingAgents>) => async () => {
    const response = await sendRequest(url, { method: 'GET', headers, signal: AbortSignal.timeout(10_000), agents });
    await discardBody(response, 1024);
  };
  /** One request on a fresh connection without an agent, as the prober makes it. */
  const probe = (extra: RequestOptions & { secureContext?: SecureContext }) => () =>
    new Promise<void>((resolve, reject) => {
      const request = httpsRequest(url, { method: 'GET', headers, agent: false, ...extra }, (response) => {
        response.resume();
        response.on('end', resolve);
      });
      request.on('error', reject);
      request.end();
    });

  const shared = createOutgoingAgents();
  // The agents as they were: a context built for each connection.
  const perConnection = { ...createOutgoingAgents(), https: new HttpsAgent({ keepAlive: true, scheduling: 'lifo' }) };
  const secureContext = createSecureContext();
  const uncached = createOutgoingAgents({ resumeTls: false });
  const variants: Record<string, () => Promise<void>> = {
    'agents, a context per connection': throughAgents(perConnection),
    'agents, one shared context': throughAgents(shared),
    // What keeping TLS sessions costs when the site never resumes one (as here, and as after hours): the sites' agents.
    'agents, one shared context, no sessions kept (the sites’)': throughAgents(uncached),
    'prober, a context per connection': probe({}),
    'prober, one shared context': probe({ secureContext }),
  };

  const run = async (one: () => Promise<void>, count: number) => {
    let left = count;
    const worker = async () => {
      while (left-- > 0) await one();
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  const figures = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
  for (const one of Object.values(variants)) await run(one, 50); // warm-up: code compiled, the authorities loaded
  for (let round = 1; round <= ROUNDS; round++)
    for (const [name, one] of Object.entries(variants)) {
      const cpu = process.cpuUsage();
      await run(one, REQUESTS);
      const used = process.cpuUsage(cpu);
      figures.get(name)!.push((used.user + used.system) / 1000 / REQUESTS);
    }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  console.log(
    `${REQUESTS} requests a round, each on a new connection (full TLS 1.3 handshake), ${CONCURRENCY} at a time, ` +
      `median of ${ROUNDS} rounds, CPU per request:`,
  );
  for (const [name, values] of figures)
    console.log(`  ${name}: ${median(values).toFixed(3)} ms (rounds ${values.map((v) => v.toFixed(3)).join(', ')})`);
  const cpu = (name: string) => median(figures.get(name)!);
  const row = (name: string, baseline: string) => ({
    figure: `${name}; baseline: ${baseline}`,
    value: `${cpu(name).toFixed(3)} ms, ${(cpu(name) / cpu(baseline)).toFixed(2)}×`,
    baseline: `${cpu(baseline).toFixed(3)} ms`,
  });
  printSummary(`tls-connections (CPU per request on a new connection, median of ${ROUNDS} rounds of ${REQUESTS})`, [
    row('agents, one shared context', 'agents, a context per connection'),
    row('agents, one shared context, no sessions kept (the sites’)', 'agents, a context per connection'),
    row('prober, one shared context', 'prober, a context per connection'),
  ]);
  shared.destroy();
  perConnection.destroy();
  perConnection.https.destroy();
  uncached.destroy();
  server.kill();
}
