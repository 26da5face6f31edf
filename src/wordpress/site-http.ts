import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { defineProblem, isAppError } from '../shared/errors.js';
import {
  addressNotAllowedProblem,
  isAddressNotAllowed,
  networkProblems,
  type NetworkPolicy,
} from '../shared/network-policy.js';
import { BodyTooLarge, createOutgoingAgents, readBody, sendRequest } from '../shared/outgoing-http.js';

/**
 * Every call Sitewarden makes to a remote site goes through here, so timeouts, body caps,
 * redirects and the retry policy live in one place. A site that hangs, floods or garbles
 * its answer yields a problem, never a crash or a request that never ends.
 */
export const siteHttpProblems = {
  unreachable: defineProblem('site-unreachable', 502, 'The site could not be reached'),
  timeout: defineProblem('site-timeout', 504, 'The site did not answer in time'),
  tooLarge: defineProblem('site-response-too-large', 502, 'The site’s answer was too large'),
  invalidResponse: defineProblem('site-invalid-response', 502, 'The site’s answer could not be understood'),
  /** The site's address (or a redirect's) is one the network policy refuses: nothing was sent. */
  addressNotAllowed: networkProblems.addressNotAllowed,
};

interface SiteRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  url: string;
  headers?: Record<string, string>;
  /** Serialised as JSON. */
  json?: unknown;
  /** Raw bytes sent as they are (with `contentType`, default application/octet-stream); ignored when `json` is given. */
  body?: Uint8Array;
  contentType?: string;
  basicAuth?: { username: string; password: string };
  timeoutMs?: number;
  maxBytes?: number;
  followRedirects?: boolean;
}

export interface SiteResponse {
  status: number;
  /** The URL that answered, after redirects. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text(): string;
  /** Parses the body as JSON; a site answering HTML or garbage gives `site-invalid-response`. */
  /** The body as JSON, unchecked: the caller checks it against the schema of what it expects (a site is untrusted). */
  json(): unknown;
}

interface SiteStreamResponse {
  status: number;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** At most the request's `maxBytes` come through; more fails it with `site-response-too-large`, a stall past the time limit with `site-timeout`. */
  body: Readable;
}

export interface SiteHttp {
  request(req: SiteRequest): Promise<SiteResponse>;
  /** A GET (or a POST of `json`) whose answer is streamed instead of buffered (backup downloads): no redirects, no retry. */
  stream(req: SiteRequest): Promise<SiteStreamResponse>;
  close(): Promise<void>;
}

const MAX_REDIRECTS = 5;
const RETRY_DELAY_MS = 250;
const RETRYABLE_STATUS = new Set([502, 503, 504]);

class NetworkFailure extends Error {
  constructor(
    readonly kind: 'timeout' | 'unreachable',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function createSiteHttp({
  timeoutMs,
  maxBytes,
  userAgent,
  network,
}: {
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  /** Every connection, redirects' included, is checked against it first (`address-not-allowed`). */
  network: NetworkPolicy;
}): SiteHttp {
  // A site is reached again mostly hours later (its sync, a bulk update), past the few minutes servers resume TLS
  // sessions for: storing each host's session and offering it on the next connection cost 0.4 ms of CPU a connection
  // and rarely save a handshake (bench/tls-connections.ts). Node still decodes the tickets a server sends.
  const agents = createOutgoingAgents({ resumeTls: false, network });

  async function once(req: SiteRequest, url: string, deadline: AbortSignal): Promise<SiteResponse> {
    const headers: Record<string, string> = {
      'user-agent': userAgent,
      accept: 'application/json, text/html;q=0.5, */*;q=0.1',
      ...req.headers,
    };
    if (req.basicAuth) headers.authorization = basicAuthorization(req.basicAuth);
    let body: string | Uint8Array | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    } else if (req.body !== undefined) {
      body = req.body;
      headers['content-type'] = req.contentType ?? 'application/octet-stream';
    }
    const limit = req.maxBytes ?? maxBytes;
    let response: IncomingMessage;
    try {
      response = await sendRequest(new URL(url), {
        method: req.method ?? 'GET',
        headers,
        body,
        signal: deadline,
        agents,
      });
    } catch (error) {
      if (isAddressNotAllowed(error)) throw addressNotAllowedProblem(error);
      throw toNetworkFailure(error, url, deadline);
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      response.destroy();
      throw siteHttpProblems.tooLarge.create(`${url} announced ${declared} bytes, more than the ${limit}-byte limit`);
    }
    let buffer: Buffer;
    try {
      buffer = await readBody(response, limit);
    } catch (error) {
      if (error instanceof BodyTooLarge)
        throw siteHttpProblems.tooLarge.create(`${url} sent more than the ${limit}-byte limit`);
      throw toNetworkFailure(error, url, deadline);
    }
    const status = response.statusCode ?? 0;
    return {
      status,
      url,
      headers: response.headers,
      body: buffer,
      text: () => buffer.toString('utf8'),
      json(): unknown {
        try {
          const value: unknown = JSON.parse(buffer.toString('utf8').replace(/^\uFEFF/, ''));
          return value;
        } catch {
          const contentType = String(response.headers['content-type'] ?? 'unknown type');
          throw siteHttpProblems.invalidResponse.create(
            `${url} answered ${status} with ${contentType} that is not valid JSON`,
            { siteStatus: status },
          );
        }
      },
    };
  }

  async function withRedirects(req: SiteRequest, deadline: AbortSignal): Promise<SiteResponse> {
    let url = req.url;
    let current = req;
    for (let hop = 0; ; hop++) {
      const response = await once(current, url, deadline);
      const location = response.headers.location;
      const isRedirect = response.status >= 300 && response.status < 400 && typeof location === 'string';
      if (!isRedirect || req.followRedirects === false || (current.method ?? 'GET') !== 'GET') return response;
      if (hop >= MAX_REDIRECTS)
        throw siteHttpProblems.invalidResponse.create(`${req.url} redirected more than ${MAX_REDIRECTS} times`);
      const next = new URL(location, url);
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        throw siteHttpProblems.invalidResponse.create(`${url} redirected to an unsupported address`);
      // Credentials never follow a redirect to another origin.
      if (next.origin !== new URL(url).origin) current = { ...current, basicAuth: undefined };
      url = next.toString();
    }
  }

  return {
    async request(req) {
      const idempotent = (req.method ?? 'GET') === 'GET' || req.method === 'HEAD';
      const timeout = req.timeoutMs ?? timeoutMs;
      for (let attempt = 1; ; attempt++) {
        const deadline = startDeadline(timeout);
        try {
          const response = await withRedirects(req, deadline.signal).finally(deadline.stop);
          if (idempotent && attempt === 1 && RETRYABLE_STATUS.has(response.status)) {
            await delay(RETRY_DELAY_MS);
            continue;
          }
          return response;
        } catch (error) {
          if (error instanceof NetworkFailure) {
            if (error.kind === 'unreachable' && idempotent && attempt === 1) {
              await delay(RETRY_DELAY_MS);
              continue;
            }
            const problem = error.kind === 'timeout' ? siteHttpProblems.timeout : siteHttpProblems.unreachable;
            throw problem.create(error.message, error.kind === 'timeout' ? { timeoutMs: timeout } : {}, {
              cause: error.cause,
            });
          }
          throw error;
        }
      }
    },
    async stream(req) {
      const timeout = req.timeoutMs ?? timeoutMs;
      const { signal: deadline, stop } = startDeadline(timeout);
      const limit = req.maxBytes ?? maxBytes;
      const headers: Record<string, string> = {
        'user-agent': userAgent,
        accept: 'application/octet-stream, application/json;q=0.5',
        ...req.headers,
      };
      if (req.basicAuth) headers.authorization = basicAuthorization(req.basicAuth);
      const asProblem = (error: unknown) => {
        if (isAddressNotAllowed(error)) return addressNotAllowedProblem(error);
        const failure = toNetworkFailure(error, req.url, deadline);
        return (failure.kind === 'timeout' ? siteHttpProblems.timeout : siteHttpProblems.unreachable).create(
          failure.message,
          failure.kind === 'timeout' ? { timeoutMs: timeout } : {},
          { cause: error },
        );
      };
      let response: IncomingMessage;
      try {
        const body = req.json === undefined ? undefined : JSON.stringify(req.json);
        if (body !== undefined) headers['content-type'] = 'application/json';
        response = await sendRequest(new URL(req.url), {
          method: req.method === 'POST' ? 'POST' : 'GET',
          headers,
          body,
          signal: deadline,
          agents,
        });
      } catch (error) {
        stop();
        throw asProblem(error);
      }
      async function* capped(): AsyncGenerator<Buffer> {
        let size = 0;
        try {
          for await (const chunk of response) {
            size += (chunk as Buffer).length;
            if (size > limit)
              throw siteHttpProblems.tooLarge.create(`${req.url} sent more than the ${limit}-byte limit`);
            yield chunk as Buffer;
          }
        } catch (error) {
          throw isAppError(error) ? error : asProblem(error);
        } finally {
          stop();
          if (!response.destroyed) response.destroy();
        }
      }
      return {
        status: response.statusCode ?? 0,
        url: req.url,
        headers: response.headers,
        body: Readable.from(capped(), { objectMode: false }),
      };
    },
    // Called last at shutdown, after work had its grace period: requests still open belong to
    // abandoned jobs, so they are cut rather than awaited (a hung site would hold the stop up).
    close: async () => {
      agents.destroy();
    },
  };
}

/**
 * A call's deadline, stopped once the call is done. AbortSignal.timeout's timer cannot be stopped:
 * it fires after every call that outlived nothing, aborting with a new DOMException (a stack trace
 * each), which showed as a few per cent of a bulk update's CPU.
 */
function startDeadline(ms: number): { signal: AbortSignal; stop: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  timer.unref();
  return { signal: controller.signal, stop: () => clearTimeout(timer) };
}

function toNetworkFailure(error: unknown, url: string, deadline: AbortSignal): NetworkFailure {
  if (deadline.aborted) return new NetworkFailure('timeout', `${url} did not answer in time`, { cause: error });
  const code = (error as { code?: string }).code ?? '';
  const host = safeHost(url);
  const reasons: Record<string, string> = {
    ENOTFOUND: `the host name ${host} does not resolve`,
    EAI_AGAIN: `the host name ${host} could not be resolved`,
    ECONNREFUSED: `${host} refused the connection`,
    ECONNRESET: `${host} closed the connection`,
    EPIPE: `${host} closed the connection`,
    ETIMEDOUT: `connecting to ${host} timed out`,
    EHOSTUNREACH: `${host} is unreachable`,
    ENETUNREACH: `${host} is unreachable`,
  };
  const reason =
    reasons[code] ??
    (code.startsWith('ERR_TLS') || code.includes('CERT')
      ? `TLS with ${host} failed (${code})`
      : code.startsWith('HPE_')
        ? `${host} answered with something that is not HTTP (${code})`
        : `${url}: ${(error as Error).message ?? 'request failed'}`);
  return new NetworkFailure('unreachable', reason, { cause: error });
}

function basicAuthorization({ username, password }: { username: string; password: string }): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
