/**
 * Loopback targets for bench/uptime.ts, in their own process so their CPU is not counted as
 * the daemon's. One server per loopback address 127.0.0.1–8 (eight addresses give eight times
 * the ephemeral ports for connections that are never reused). Paths choose the behaviour.
 * Prints one JSON line with the port once listening; exits when stdin closes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const PAGE = `<!doctype html><html><head><title>Bench site</title></head><body>${'<p>Just another WordPress site.</p>'.repeat(60)}</body></html>`;
const ADDRESSES = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 1}`);

function handle(path: string, respond: (status: number, body: string) => void, hang: () => void): void {
  const kind = path.split('/')[1];
  const n = Number(path.split('/')[2] ?? 0);
  switch (kind) {
    case 'slow':
      setTimeout(() => respond(200, PAGE), 300 + (n % 1200));
      return;
    case 'fail':
      respond(500, 'Internal Server Error');
      return;
    case 'flap':
      // Down for one minute in three, at a different phase for each site.
      respond(Math.floor((Date.now() / 60_000 + n) % 3) === 0 ? 503 : 200, PAGE);
      return;
    case 'hang':
      hang();
      return;
    default:
      respond(200, PAGE);
  }
}

async function main() {
  let port = 0;
  const servers: Server[] = [];
  for (const address of ADDRESSES) {
    const server = createServer((req, res) =>
      handle(
        req.url ?? '/',
        (status, body) => {
          res.writeHead(status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        () => setTimeout(() => res.destroy(), 15_000),
      ),
    );
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(port, address, 4096, resolve));
    port = (server.address() as AddressInfo).port;
    servers.push(server);
  }
  process.stdout.write(`${JSON.stringify({ port, addresses: ADDRESSES })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

void main();
