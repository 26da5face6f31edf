import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { SecureContext, TLSSocket } from 'node:tls';
import { isAddressNotAllowed, type NetworkPolicy } from '../shared/network-policy.js';
import { sharedTlsContext } from '../shared/outgoing-http.js';

/** Why a probe failed; a stable vocabulary that API clients and alert rules can match on. */
export const probeCauses = [
  'dns',
  'connect',
  'tls',
  'timeout',
  'http_status',
  'keyword',
  'body_too_large',
  'redirects',
  'protocol',
  'address_not_allowed',
] as const;
export type ProbeCause = (typeof probeCauses)[number];

export interface ProbeSettings {
  url: string;
  timeoutMs: number;
  /** Accepted final statuses; null accepts 200–399. */
  expectedStatus: number[] | null;
  keyword: string | null;
  keywordMode: 'present' | 'absent';
}

export interface ProbeOutcome {
  up: boolean;
  httpStatus: number | null;
  /** Until the final answer's body was read (or the failure); null when nothing answered. */
  responseMs: number | null;
  cause: ProbeCause | null;
  /** Epoch ms; https only. */
  certificateExpiresAt: number | null;
}

export interface Prober {
  probe(settings: ProbeSettings): Promise<ProbeOutcome>;
  close(): Promise<void>;
}

const MAX_REDIRECTS = 5;

/** One answer: its status and headers, and its body read up to the cap. */
interface Answer {
  status: number;
  location: string | undefined;
  /** The body as text when asked for ('' otherwise); null when it is over the cap. */
  body: string | null;
  certificateExpiresAt: number | null;
}

/** One probe's progress: the request in flight (the deadline destroys it) and the last status seen. */
interface Attempt {
  request?: ClientRequest;
  expired: boolean;
  status: number | null;
}

class ProbeTimeout extends Error {
  override readonly name = 'ProbeTimeout';
}

/**
 * One HTTP GET per probe on a fresh connection (distinct sites never share one), following
 * redirects, reading at most `maxBodyBytes`. Never throws: every failure becomes a cause; a hop to an
 * address `network` refuses is `address_not_allowed`, found before anything connects.
 *
 * Built on node:http with agents that keep nothing (a fresh connection, closed after the answer; no TLS
 * session resumed) rather than undici: for one request per connection it costs about half the CPU
 * (bench/uptime.ts), and the monitor makes thousands of them a minute. Site calls reuse connections
 * (src/shared/outgoing-http.ts).
 */
export function createProber({
  maxBodyBytes,
  userAgent,
  ca,
  network,
}: {
  maxBodyBytes: number;
  userAgent: string;
  ca?: string | Buffer;
  network: NetworkPolicy;
}): Prober {
  const inFlight = new Set<ClientRequest>();
  const secureContext = sharedTlsContext(ca);
  const agents = {
    http: network.guard(new HttpAgent({ keepAlive: false })),
    https: network.guard(new HttpsAgent({ keepAlive: false, maxCachedSessions: 0 })),
  };
  const headers = { 'user-agent': userAgent, accept: 'text/html,*/*;q=0.8' };

  function get(url: URL, keepText: boolean, deadline: Attempt): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const https = url.protocol === 'https:';
      if (!https && url.protocol !== 'http:')
        return reject(
          Object.assign(new Error(`unsupported protocol ${url.protocol}`), { code: 'ERR_INVALID_PROTOCOL' }),
        );
      const options: RequestOptions & { secureContext?: SecureContext } = {
        method: 'GET',
        headers,
        agent: https ? agents.https : agents.http,
        ...(https ? { secureContext } : {}),
      };
      let certificateExpiresAt: number | null = null;
      const request = (https ? httpsRequest : httpRequest)(url, options, (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        deadline.status = status;
        const location = response.headers.location;
        if (status >= 300 && status < 400 && location !== undefined) {
          response.destroy();
          return resolve({ status, location, body: '', certificateExpiresAt });
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBodyBytes) {
          response.destroy();
          return resolve({ status, location: undefined, body: null, certificateExpiresAt });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBodyBytes) {
            response.destroy();
            return resolve({ status, location: undefined, body: null, certificateExpiresAt });
          }
          if (keepText) chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({
            status,
            location: undefined,
            body: keepText ? Buffer.concat(chunks).toString('utf8') : '',
            certificateExpiresAt,
          }),
        );
        response.on('error', reject);
        response.on('close', () => {
          if (!response.complete)
            reject(Object.assign(new Error('the connection closed before the answer ended'), { code: 'ECONNRESET' }));
        });
      });
      if (https) {
        request.once('socket', (socket) =>
          socket.once('secureConnect', () => {
            const validTo = (socket as TLSSocket).getPeerCertificate().valid_to;
            if (validTo) certificateExpiresAt = Date.parse(validTo);
          }),
        );
      }
      request.on('error', reject);
      request.on('close', () => inFlight.delete(request));
      inFlight.add(request);
      deadline.request = request;
      if (deadline.expired) request.destroy(new ProbeTimeout());
      request.end();
    });
  }

  async function probe(settings: ProbeSettings): Promise<ProbeOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const deadline: Attempt = { expired: false, status: null };
    const timer = setTimeout(() => {
      deadline.expired = true;
      deadline.request?.destroy(new ProbeTimeout());
    }, settings.timeoutMs);
    let url = settings.url;
    let certificateExpiresAt: number | null = null;
    try {
      for (let hop = 0; ; hop++) {
        const answer = await get(new URL(url), settings.keyword !== null, deadline);
        const status = answer.status;
        certificateExpiresAt = answer.certificateExpiresAt ?? certificateExpiresAt;
        if (answer.location !== undefined) {
          if (hop >= MAX_REDIRECTS) return failure('redirects', status, elapsed(), certificateExpiresAt);
          url = new URL(answer.location, url).toString();
          continue;
        }
        const responseMs = elapsed();
        if (answer.body === null) return failure('body_too_large', status, responseMs, certificateExpiresAt);
        const expected = settings.expectedStatus
          ? settings.expectedStatus.includes(status)
          : status >= 200 && status < 400;
        if (!expected) return failure('http_status', status, responseMs, certificateExpiresAt);
        if (settings.keyword !== null) {
          const found = answer.body.includes(settings.keyword);
          if (found !== (settings.keywordMode === 'present'))
            return failure('keyword', status, responseMs, certificateExpiresAt);
        }
        return { up: true, httpStatus: status, responseMs, cause: null, certificateExpiresAt };
      }
    } catch (error) {
      return failure(deadline.expired ? 'timeout' : causeOf(error), deadline.status, null, certificateExpiresAt);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    probe,
    async close() {
      for (const request of inFlight) request.destroy();
      inFlight.clear();
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

const failure = (
  cause: ProbeCause,
  httpStatus: number | null,
  responseMs: number | null,
  certificateExpiresAt: number | null,
): ProbeOutcome => ({
  up: false,
  httpStatus,
  responseMs,
  cause,
  certificateExpiresAt,
});

export function causeOf(error: unknown): ProbeCause {
  if (isAddressNotAllowed(error)) return 'address_not_allowed';
  const code = (error as { code?: string }).code ?? '';
  const causeCode = ((error as { cause?: { code?: string } }).cause?.code ?? '') as string;
  for (const value of [code, causeCode]) {
    if (value === 'ENOTFOUND' || value === 'EAI_AGAIN' || value === 'EAI_NONAME') return 'dns';
    if (
      value === 'UND_ERR_CONNECT_TIMEOUT' ||
      value === 'UND_ERR_HEADERS_TIMEOUT' ||
      value === 'UND_ERR_BODY_TIMEOUT' ||
      value === 'ETIMEDOUT'
    )
      return 'timeout';
    if (
      value.startsWith('ERR_TLS') ||
      value.startsWith('ERR_SSL') ||
      value.includes('CERT') ||
      value === 'EPROTO' ||
      value === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'
    )
      return 'tls';
    if (
      ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED'].includes(
        value,
      )
    )
      return 'connect';
  }
  return 'protocol';
}
