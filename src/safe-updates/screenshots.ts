import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';
import type { LaunchedChrome } from 'chrome-launcher';
import { chromeFlags, launchChromium } from '../performance/index.js';
import { z } from 'zod';
import type { NetworkPolicy } from '../shared/network-policy.js';

/**
 * Screenshots of a site's pages in Debian's Chromium, through chrome-launcher (already the
 * daemon's way to start Chromium for Lighthouse) and a few DevTools protocol calls over undici's
 * WebSocket: no browser-automation library at run time. Same viewport every time, animations
 * and transitions off, reduced motion, web fonts loaded, only the site's own host reachable, at the address
 * `network` allowed for it (resolved before Chromium starts, which then looks nothing up: AddressNotAllowed if refused).
 */
const VIEWPORT = { width: 1280, height: 800 };
const PAGE_TIMEOUT_MS = 30_000;
/** A DevTools protocol message: an answer to a command (`id`, `result` or `error`) or an event (`method`). */
const CdpMessage = z.object({
  id: z.number().optional(),
  method: z.string().optional(),
  result: z.unknown().optional(),
  error: z.object({ message: z.string() }).optional(),
});

const FREEZE_PAGE = `(async () => {
  const style = document.createElement('style');
  style.textContent = '*,*::before,*::after{animation:none!important;transition:none!important;caret-color:transparent!important;scroll-behavior:auto!important}';
  document.documentElement.appendChild(style);
  await Promise.race([document.fonts.ready, new Promise((resolve) => setTimeout(resolve, 5000))]);
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return true;
})()`;

type Shoot = (url: string) => Promise<Buffer>;

/** Starts Chromium, lets `work` take screenshots, and always stops it and removes its profile. */
export async function withScreenshots<T>(
  { chromePath, host, network }: { chromePath: string; host: string; network: NetworkPolicy },
  work: (shoot: Shoot) => Promise<T>,
): Promise<T> {
  const [allowed] = await network.resolve(host);
  const auditedAddress = isIP(host.replace(/^\[|\]$/g, '')) ? null : allowed!.address;
  const profile = await mkdtemp(join(tmpdir(), 'sitewarden-shots-'));
  let chrome: LaunchedChrome | undefined;
  try {
    // Loaded when first used: a daemon that takes no screenshots for hours keeps a smaller heap to collect meanwhile
    // (docs/scaling.md, "Memory"). Loading undici sets the dispatcher global fetch runs on (none is set before it), as
    // its import at start did; it is loaded before the first fetch below.
    await import('undici');
    chrome = await launchChromium({
      chromePath,
      userDataDir: profile,
      chromeFlags: [
        ...chromeFlags({
          auditedHost: host,
          auditedAddress,
          runningAsRoot: process.getuid?.() === 0,
          blockThirdParty: true,
        }),
        `--window-size=${VIEWPORT.width},${VIEWPORT.height}`,
        '--hide-scrollbars',
        '--force-device-scale-factor=1',
        '--font-render-hinting=none',
      ],
      envVars: {
        HOME: profile,
        XDG_CONFIG_HOME: profile,
        XDG_CACHE_HOME: profile,
        PATH: process.env.PATH ?? '/usr/bin:/bin',
      },
      handleSIGINT: false,
      logLevel: 'silent',
    });
    const port = chrome.port;
    return await work((url) => screenshot(port, url));
  } finally {
    chrome?.kill();
    await rm(profile, { recursive: true, force: true });
  }
}

async function screenshot(port: number, url: string): Promise<Buffer> {
  const created = await fetch(`http://127.0.0.1:${port}/json/new?about:blank`, {
    method: 'PUT',
    signal: AbortSignal.timeout(10_000),
  });
  const target = (await created.json()) as { id: string; webSocketDebuggerUrl: string };
  const page = await connect(target.webSocketDebuggerUrl);
  try {
    await page.send('Page.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { ...VIEWPORT, deviceScaleFactor: 1, mobile: false });
    await page.send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-reduced-motion', value: 'reduce' }] });
    const loaded = page.next('Page.loadEventFired');
    await page.send('Page.navigate', { url });
    await loaded;
    await page.send('Runtime.evaluate', { expression: FREEZE_PAGE, awaitPromise: true });
    const shot = (await page.send('Page.captureScreenshot', { format: 'png', fromSurface: true })) as { data: string };
    return Buffer.from(shot.data, 'base64');
  } finally {
    page.close();
    // The answer is read to its end: a body left paused when Chromium closes the connection makes
    // undici's parser assert, uncatchably (global fetch runs on the dispatcher undici's WebSocket set).
    await fetch(`http://127.0.0.1:${port}/json/close/${target.id}`, { signal: AbortSignal.timeout(5_000) })
      .then((closed) => closed.arrayBuffer())
      .catch(() => undefined);
  }
}

/** A DevTools session on one page: commands answered by id, one awaited event at a time, all within the page's time limit. */
async function connect(endpoint: string) {
  const { WebSocket } = await import('undici');
  const socket = new WebSocket(endpoint);
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const waiting = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  let failure: Error | null = null;
  const fail = (error: Error) => {
    failure = error;
    for (const { reject } of [...pending.values(), ...waiting.values()]) reject(error);
    pending.clear();
    waiting.clear();
  };
  const deadline = setTimeout(
    () => fail(new Error(`the page did not load within ${PAGE_TIMEOUT_MS} ms`)),
    PAGE_TIMEOUT_MS,
  );
  socket.addEventListener('message', (event) => {
    // Chromium's DevTools protocol: an answer (`id`) or an event (`method`); a line of any other shape is ignored.
    const parsed = CdpMessage.safeParse(JSON.parse(String(event.data)));
    if (!parsed.success) return;
    const message = parsed.data;
    if (message.id !== undefined) {
      const entry = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) entry?.reject(new Error(message.error.message));
      else entry?.resolve(message.result);
    } else if (message.method) {
      waiting.get(message.method)?.resolve();
      waiting.delete(message.method);
    }
  });
  socket.addEventListener('close', () => fail(failure ?? new Error('Chromium closed the page')));
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve());
    socket.addEventListener('error', () => reject(new Error('could not reach Chromium')));
  });
  let nextId = 0;
  return {
    send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
      if (failure) return Promise.reject(failure);
      const id = ++nextId;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      });
    },
    /** The next `method` event; a failure (time limit, closed page) rejects it. */
    next(method: string): Promise<void> {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => waiting.set(method, { resolve, reject }));
    },
    close() {
      clearTimeout(deadline);
      socket.close();
    },
  };
}
