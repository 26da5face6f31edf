import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';

/** Why a probe failed; a stable vocabulary that API clients and alert rules can match on. */
export const probeCauses = ['dns', 'connect', 'tls', 'timeout', 'http_status', 'keyword', 'body_too_large', 'redirects', 'protocol'] as const;
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

/**
 * One HTTP GET per probe on a fresh connection (distinct sites never share one), following
 * redirects, reading at most `maxBodyBytes`. Never throws: every failure becomes a cause.
 */
export function createProber({ maxBodyBytes, userAgent, ca }: { maxBodyBytes: number; userAgent: string; ca?: string | Buffer }): Prober {
  // The peer certificate is only visible on the socket; probes of one origin see the same one.
  const certificates = new Map<string, number>();
  const connect = buildConnector({ ...(ca ? { ca } : {}) });
  const agent = new Agent({
    pipelining: 0, // no keep-alive: every probe pays its own connection, as separate sites would
    connect: (options, callback) =>
      connect(options, (error, socket) => {
        if (!error && options.protocol === 'https:') {
          const validTo = (socket as TLSSocket).getPeerCertificate?.().valid_to;
          if (validTo) certificates.set(`${options.hostname}:${options.port}`, Date.parse(validTo));
        }
        // undici's callback has two shapes; forwarding the same arguments keeps both.
        (callback as (error: Error | null, socket: unknown) => void)(error, socket);
      }),
  });

  async function probe(settings: ProbeSettings): Promise<ProbeOutcome> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(settings.timeoutMs);
    const elapsed = () => Math.round(performance.now() - started);
    let url = settings.url;
    let certificateExpiresAt: number | null = null;
    let status: number | null = null;
    try {
      for (let hop = 0; ; hop++) {
        const target = new URL(url);
        const response: Dispatcher.ResponseData = await request(url, { method: 'GET', headers: { 'user-agent': userAgent, accept: 'text/html,*/*;q=0.8' }, signal: deadline, dispatcher: agent });
        status = response.statusCode;
        if (target.protocol === 'https:') certificateExpiresAt = certificates.get(`${target.hostname}:${target.port || '443'}`) ?? certificateExpiresAt;
        const location = response.headers.location;
        if (status >= 300 && status < 400 && typeof location === 'string') {
          discard(response);
          if (hop >= MAX_REDIRECTS) return failure('redirects', status, elapsed(), certificateExpiresAt);
          url = new URL(location, url).toString();
          continue;
        }
        const body = await readCapped(response, maxBodyBytes, settings.keyword !== null);
        const responseMs = elapsed();
        if (body === null) return failure('body_too_large', status, responseMs, certificateExpiresAt);
        const expected = settings.expectedStatus ? settings.expectedStatus.includes(status) : status >= 200 && status < 400;
        if (!expected) return failure('http_status', status, responseMs, certificateExpiresAt);
        if (settings.keyword !== null) {
          const found = body.includes(settings.keyword);
          if (found !== (settings.keywordMode === 'present')) return failure('keyword', status, responseMs, certificateExpiresAt);
        }
        return { up: true, httpStatus: status, responseMs, cause: null, certificateExpiresAt };
      }
    } catch (error) {
      return failure(deadline.aborted ? 'timeout' : causeOf(error), status, null, certificateExpiresAt);
    }
  }

  return { probe, close: () => agent.close() };
}

const failure = (cause: ProbeCause, httpStatus: number | null, responseMs: number | null, certificateExpiresAt: number | null): ProbeOutcome => ({
  up: false,
  httpStatus,
  responseMs,
  cause,
  certificateExpiresAt,
});

/** Drops an answer's body without reading it; undici reports the abort as an error nobody needs. */
function discard(response: Dispatcher.ResponseData): void {
  response.body.on('error', () => undefined);
  response.body.destroy();
}

/** The body as text when a keyword needs it ('' otherwise), or null when it is over the cap. */
async function readCapped(response: Dispatcher.ResponseData, cap: number, keepText: boolean): Promise<string | null> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) {
    discard(response);
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > cap) {
      discard(response);
      return null;
    }
    if (keepText) chunks.push(chunk as Buffer);
  }
  return keepText ? Buffer.concat(chunks).toString('utf8') : '';
}

export function causeOf(error: unknown): ProbeCause {
  const code = (error as { code?: string }).code ?? '';
  const causeCode = ((error as { cause?: { code?: string } }).cause?.code ?? '') as string;
  for (const value of [code, causeCode]) {
    if (value === 'ENOTFOUND' || value === 'EAI_AGAIN' || value === 'EAI_NONAME') return 'dns';
    if (value === 'UND_ERR_CONNECT_TIMEOUT' || value === 'UND_ERR_HEADERS_TIMEOUT' || value === 'UND_ERR_BODY_TIMEOUT' || value === 'ETIMEDOUT') return 'timeout';
    if (value.startsWith('ERR_TLS') || value.startsWith('ERR_SSL') || value.includes('CERT') || value === 'EPROTO' || value === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE') return 'tls';
    if (['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED'].includes(value)) return 'connect';
  }
  return 'protocol';
}
