import { constants } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/** A certificate and its key (PEM) a fake site serves HTTPS with. */
export interface SiteTls {
  key: string;
  cert: string;
}

/**
 * A loopback HTTP server that answers whatever `handler` writes: the fake WordPress runs on it, and
 * tests use it alone for a site that is not WordPress at all (hangs, garbage, bare status codes).
 * With `tls`, HTTPS, as every production site answers (WordPress offers Application Passwords over
 * HTTPS only, outside a `local` environment). It resumes no TLS session (its TLS 1.3 tickets are
 * stateful ones it keeps no store for): each connection makes a full handshake, as one to a site last
 * reached hours before does.
 */
export async function startFakeSite(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  { tls }: { tls?: SiteTls } = {},
) {
  const sockets = new Set<Socket>();
  const server = tls
    ? createTlsServer({ key: tls.key, cert: tls.cert, secureOptions: constants.SSL_OP_NO_TICKET }, handler)
    : createServer(handler);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
