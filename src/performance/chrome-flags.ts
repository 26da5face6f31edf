/**
 * Chromium flags on top of chrome-launcher's defaults (which already turn off background
 * networking, component updates, sync, default apps, domain reliability and phishing checks).
 * With `blockThirdParty` the page may reach only its own host: every other host name resolves to
 * nothing and everything else goes to a dead proxy, except loopback and the audited host.
 */
export function chromeFlags({
  auditedHost,
  runningAsRoot,
  blockThirdParty,
}: {
  auditedHost: string;
  runningAsRoot: boolean;
  blockThirdParty: boolean;
}): string[] {
  const loopback = ['localhost', '127.0.0.1', '[::1]'];
  const allowed = loopback.includes(auditedHost) ? loopback : [...loopback, auditedHost];
  const confinement = [
    `--host-resolver-rules=MAP * ~NOTFOUND, ${allowed.map((host) => `EXCLUDE ${host.replace(/^\[|\]$/g, '')}`).join(', ')}`,
    '--proxy-server=http://127.0.0.1:9',
    `--proxy-bypass-list=${allowed.join(';')}`,
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
    ...(blockThirdParty ? confinement : []),
  ];
}
