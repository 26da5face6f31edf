/**
 * Chromium flags on top of chrome-launcher's defaults (which already turn off background
 * networking, component updates, sync, default apps, domain reliability and phishing checks).
 *
 * `auditedAddress`, the address the daemon resolved the audited host to and its network policy allowed
 * (src/shared/network-policy.ts), is where Chromium connects for that host: `MAP host address`, no lookup of its
 * own a rebinding DNS answer could turn elsewhere. With `blockThirdParty` the page may reach only its own host:
 * every other host name resolves to nothing and everything else (IP addresses included) goes to a dead proxy;
 * loopback stays reachable only when the audited host is on it (the tests' sites).
 */
export function chromeFlags({
  auditedHost,
  auditedAddress = null,
  runningAsRoot,
  blockThirdParty,
}: {
  auditedHost: string;
  auditedAddress?: string | null;
  runningAsRoot: boolean;
  blockThirdParty: boolean;
}): string[] {
  const bare = (host: string) => host.replace(/^\[|\]$/g, '');
  const loopback = ['localhost', '127.0.0.1', '[::1]'];
  const onLoopback =
    loopback.includes(auditedHost) ||
    (auditedAddress !== null && (auditedAddress.startsWith('127.') || auditedAddress === '::1'));
  const pinned = auditedAddress !== null && auditedAddress !== bare(auditedHost);
  const pin = pinned
    ? [`MAP ${bare(auditedHost)} ${auditedAddress.includes(':') ? `[${auditedAddress}]` : auditedAddress}`]
    : [];
  // An EXCLUDE wins over every MAP: the audited host is excluded only when it is not pinned (an IP address).
  const excluded = [...(onLoopback ? loopback : []), ...(pinned ? [] : [auditedHost])];
  const bypass = [...(onLoopback ? loopback : []), auditedHost];
  const confinement = [
    `--host-resolver-rules=${[...pin, 'MAP * ~NOTFOUND', ...[...new Set(excluded)].map((host) => `EXCLUDE ${bare(host)}`)].join(', ')}`,
    '--proxy-server=http://127.0.0.1:9',
    // `<-loopback>`: Chromium sends loopback past the proxy on its own unless told not to.
    `--proxy-bypass-list=${[...new Set(bypass), ...(onLoopback ? [] : ['<-loopback>'])].join(';')}`,
  ];
  return [
    '--headless=new',
    // Chrome's sandbox refuses to start as root; anywhere else it stays on.
    ...(runningAsRoot ? ['--no-sandbox'] : []),
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--metrics-recording-only',
    '--disable-breakpad',
    '--no-pings',
    ...(blockThirdParty ? confinement : pin.length > 0 ? [`--host-resolver-rules=${pin[0]}`] : []),
  ];
}
