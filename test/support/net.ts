import { connect, createServer, type AddressInfo } from 'node:net';

/** A port the kernel just considered free on loopback. Racy by nature: callers retry on EADDRINUSE. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Waits until something accepts TCP connections on 127.0.0.1:port. */
export async function waitForLoopbackPort(
  port: number,
  options: { timeoutMs: number; givesUp?: () => boolean },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    if (options.givesUp?.()) throw new Error(`nothing will listen on port ${port}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nothing listening on 127.0.0.1:${port} after ${options.timeoutMs} ms`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
