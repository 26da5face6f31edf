import { createServer, type Server } from 'node:net';
import puppeteer, { type Page } from 'puppeteer-core';

/**
 * Preferences that keep Firefox from reaching anything but loopback: every proxied request goes
 * to `proxyPort` on loopback (a sink that answers nothing), loopback itself is never proxied, and
 * the features that call home on their own are off (telemetry, updates, captive-portal and
 * connectivity checks, Safe Browsing lists, remote settings, Normandy studies, push, DNS prefetch
 * and speculative connections, DNS over HTTPS, OCSP, geolocation, add-on and plugin updates).
 * puppeteer-core adds its own test prefs on top (no first-run pages, no default-browser check).
 */
function offlinePrefs(proxyPort: number): Record<string, unknown> {
  return {
    'network.proxy.type': 1,
    'network.proxy.http': '127.0.0.1',
    'network.proxy.http_port': proxyPort,
    'network.proxy.ssl': '127.0.0.1',
    'network.proxy.ssl_port': proxyPort,
    'network.proxy.socks': '',
    'network.proxy.share_proxy_settings': false,
    'network.proxy.no_proxies_on': '',
    'network.proxy.allow_hijacking_localhost': false,
    'network.trr.mode': 5,
    'network.dns.disablePrefetch': true,
    'network.dns.disablePrefetchFromHTTPS': true,
    'network.prefetch-next': false,
    'network.predictor.enabled': false,
    'network.http.speculative-parallel-limit': 0,
    'browser.urlbar.speculativeConnect.enabled': false,
    'network.captive-portal-service.enabled': false,
    'network.connectivity-service.enabled': false,
    'toolkit.telemetry.enabled': false,
    'toolkit.telemetry.unified': false,
    'toolkit.telemetry.archive.enabled': false,
    'toolkit.telemetry.server': '',
    'datareporting.healthreport.uploadEnabled': false,
    'datareporting.policy.dataSubmissionEnabled': false,
    'browser.ping-centre.telemetry': false,
    'browser.newtabpage.activity-stream.feeds.telemetry': false,
    'browser.newtabpage.activity-stream.telemetry': false,
    'browser.newtabpage.enabled': false,
    'browser.startup.page': 0,
    'browser.startup.homepage': 'about:blank',
    'app.update.auto': false,
    'app.update.enabled': false,
    'app.update.disabledForTesting': true,
    'app.normandy.enabled': false,
    'app.normandy.api_url': '',
    'app.shield.optoutstudies.enabled': false,
    'messaging-system.rsexperimentloader.enabled': false,
    'services.settings.server': `http://127.0.0.1:${proxyPort}/v1`,
    'browser.safebrowsing.malware.enabled': false,
    'browser.safebrowsing.phishing.enabled': false,
    'browser.safebrowsing.downloads.enabled': false,
    'browser.safebrowsing.downloads.remote.enabled': false,
    'browser.safebrowsing.blockedURIs.enabled': false,
    'browser.safebrowsing.provider.google.updateURL': '',
    'browser.safebrowsing.provider.google4.updateURL': '',
    'browser.safebrowsing.provider.mozilla.updateURL': '',
    'dom.push.enabled': false,
    'dom.push.connection.enabled': false,
    'dom.push.serverURL': '',
    'security.OCSP.enabled': 0,
    'security.remote_settings.crlite_filters.enabled': false,
    'security.remote_settings.intermediates.enabled': false,
    'geo.enabled': false,
    'geo.provider.network.url': '',
    'browser.region.network.url': '',
    'browser.region.update.enabled': false,
    'browser.search.update': false,
    'extensions.update.enabled': false,
    'extensions.getAddons.cache.enabled': false,
    'extensions.blocklist.enabled': false,
    'extensions.systemAddon.update.enabled': false,
    'media.gmp-manager.url': '',
    'media.gmp-gmpopenh264.enabled': false,
    'identity.fxaccounts.enabled': false,
  };
}

/**
 * The proxy Firefox is pointed at: it accepts a connection, notes the request's first line (a
 * `CONNECT host:443` or `GET http://…`) and closes it, forwarding nothing. What it noted is what
 * Firefox tried to reach outside loopback.
 */
async function startSinkProxy(): Promise<{ port: number; attempts: string[]; close(): Promise<void> }> {
  const attempts: string[] = [];
  const server: Server = createServer((socket) => {
    socket.once('data', (chunk) => {
      attempts.push(chunk.toString('latin1').split('\r\n')[0] ?? '');
      socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.setTimeout(2_000, () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    attempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Runs `work` with a page of Debian's Firefox ESR (WebDriver BiDi through puppeteer-core, a fresh
 * profile), always closed afterwards. Returns what `work` returned and every attempt Firefox made
 * to reach an address outside loopback (each stopped at the sink proxy).
 */
export async function withFirefoxPage<T>(work: (page: Page) => Promise<T>): Promise<{ result: T; outside: string[] }> {
  const proxy = await startSinkProxy();
  try {
    const browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: '/usr/bin/firefox-esr',
      headless: true,
      extraPrefsFirefox: offlinePrefs(proxy.port),
      // Firefox honours services.settings.server only with this set.
      env: { ...process.env, MOZ_REMOTE_SETTINGS_DEVTOOLS: '1' },
      timeout: 60_000,
    });
    let result: T;
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(30_000);
      result = await work(page);
    } finally {
      await browser.close().catch(() => undefined);
    }
    // A proxied request names its destination (CONNECT host:port, or an absolute URL); anything
    // else reached the sink directly on loopback (remote settings point there).
    return { result, outside: proxy.attempts.filter((line) => /^(CONNECT \S+|[A-Z]+ https?:\/\/)/.test(line)) };
  } finally {
    await proxy.close();
  }
}
