/**
 * Certificates for loopback HTTPS in tests and benches, made by the `openssl` command: a certificate
 * authority made for the run, and a certificate it signs for `name` (an IP address or a host name),
 * ECDSA P-256 as a site's certificate usually is today. Files in a new temporary directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestAuthority {
  /** The authority's certificate (PEM), and its file (for NODE_EXTRA_CA_CERTS). */
  ca: string;
  caFile: string;
  /** A certificate for `name` it signs, valid `days` (default 2): its key and certificate (PEM), and their files. */
  issue(name: string, options?: { days?: number }): { key: string; cert: string; keyFile: string; certFile: string };
  /** Deletes its directory (its keys with it). */
  remove(): void;
}

// Its chatter on stderr is kept for a failure's message.
const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const ecKey = (file: string) => openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file]);

export function makeTestAuthority(commonName = 'Sitewarden test CA'): TestAuthority {
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-ca-'));
  const at = (name: string) => join(dir, name);
  ecKey(at('ca.key'));
  openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    at('ca.key'),
    '-subj',
    `/CN=${commonName}`,
    '-days',
    '30',
    '-out',
    at('ca.pem'),
  ]);
  let issued = 0;
  return {
    ca: readFileSync(at('ca.pem'), 'utf8'),
    caFile: at('ca.pem'),
    issue(name, { days = 2 } = {}) {
      const stem = at(`site-${++issued}`);
      ecKey(`${stem}.key`);
      openssl(['req', '-new', '-key', `${stem}.key`, '-subj', `/CN=${name}`, '-out', `${stem}.csr`]);
      writeFileSync(`${stem}.ext`, `subjectAltName=${isIP(name) ? 'IP' : 'DNS'}:${name}\n`);
      openssl([
        'x509',
        '-req',
        '-in',
        `${stem}.csr`,
        '-CA',
        at('ca.pem'),
        '-CAkey',
        at('ca.key'),
        '-CAcreateserial',
        '-days',
        String(days),
        '-extfile',
        `${stem}.ext`,
        '-out',
        `${stem}.pem`,
      ]);
      return {
        key: readFileSync(`${stem}.key`, 'utf8'),
        cert: readFileSync(`${stem}.pem`, 'utf8'),
        keyFile: `${stem}.key`,
        certFile: `${stem}.pem`,
      };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
