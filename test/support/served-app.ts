import { createServer } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { ServiceConfig } from '../../src/services.js';
import type { Clock } from '../../src/shared/clock.js';
import { createTestApp, type TestApp } from './test-app.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The test app served on a real loopback port, for flows where a browser has to reach the
 * daemon (WordPress redirects the approving admin to the daemon's callback).
 */
export async function serveTestApp(
  options: { clock?: Clock; config?: Partial<ServiceConfig> } = {},
): Promise<TestApp & { baseUrl: string; stop(): Promise<void> }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = createTestApp({ clock: options.clock, config: { publicUrl: baseUrl, ...options.config } });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port }, () => resolve(s));
  });
  return {
    ...t,
    baseUrl,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}
