/**
 * HTTPS for the benches' fake sites: a certificate authority made for the run and a certificate for
 * 127.0.0.1 it signs (test/support/tls-certificates.ts). The callers trust the authority through
 * NODE_EXTRA_CA_CERTS, which Node reads once, at start: `trustedOrRestarted` starts the bench again
 * with it set.
 */
import { readFileSync } from 'node:fs';
import type { SiteTls } from '../../test/support/fake-wordpress/loopback-server.js';
import { makeTestAuthority } from '../../test/support/tls-certificates.js';
import { restartWith } from './restart.js';

const SITE_KEY = 'BENCH_TLS_SITE_KEY';
const SITE_CERT = 'BENCH_TLS_SITE_CERT';

/**
 * In a bench started with its authority trusted: the site certificate to serve. Otherwise makes the
 * certificates, runs this same command again with NODE_EXTRA_CA_CERTS set (its output is this
 * one's), and exits with its status.
 */
export function trustedOrRestarted(): SiteTls {
  const key = process.env[SITE_KEY];
  const cert = process.env[SITE_CERT];
  if (key && cert && process.env.NODE_EXTRA_CA_CERTS)
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  const authority = makeTestAuthority('Sitewarden bench CA');
  const { keyFile, certFile } = authority.issue('127.0.0.1');
  restartWith({
    env: { NODE_EXTRA_CA_CERTS: authority.caFile, [SITE_KEY]: keyFile, [SITE_CERT]: certFile },
    cleanUp: () => authority.remove(),
  });
}
