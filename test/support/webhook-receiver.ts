import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What the receiver does with the next request: answer a status, never answer, or answer 200 with an endless body. */
export type Behaviour = number | 'hang' | 'flood';

/**
 * A webhook receiver on loopback. `answers` are used in turn (the last one repeats), so a
 * test can script "500, then 200".
 */
export async function startWebhookReceiver(answers: Behaviour[] = [200]) {
  const received: ReceivedRequest[] = [];
  const script = [...answers];
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const behaviour = script.length > 1 ? script.shift()! : script[0]!;
      if (behaviour === 'hang') {
        open.add(response);
        return;
      }
      if (behaviour === 'flood') {
        open.add(response);
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        const block = Buffer.alloc(64 * 1024, 120);
        const pump = () => {
          while (!response.destroyed && response.write(block));
          if (!response.destroyed) response.once('drain', pump);
        };
        pump();
        return;
      }
      response.writeHead(behaviour, { 'content-type': 'text/plain' }).end(`answered ${behaviour}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/sitewarden`,
    received,
    /** Changes what the following requests get. */
    answer(...next: Behaviour[]) {
      script.splice(0, script.length, ...next);
    },
    async close() {
      for (const response of open) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
