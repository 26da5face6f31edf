import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { NetworkPolicy } from './network-policy.js';

/**
 * Outgoing HTTP on node:http, for calls to hosts we do not control (sites, webhook receivers).
 * Not undici: undici 7 asserts, uncatchably, when a server closes the socket while a body's
 * parser is paused (a body read slowly, or dropped before its end), which takes the process down.
 */
export interface OutgoingAgents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

/**
 * The TLS context every HTTPS connection of one client shares: without it `tls.connect` builds one per
 * connection, 0.26–0.34 ms of CPU each (bench/tls-connections.ts). Node's default authorities (its
 * bundled list, plus NODE_EXTRA_CA_CERTS), or only `ca`'s (tests).
 */
export const sharedTlsContext = (ca?: string | Buffer): SecureContext =>
  createSecureContext(ca === undefined ? {} : { ca });

/**
 * Keep-alive pools; an idle connection is closed after `idleMs`, before most servers would drop it mid-reuse.
 * Every HTTPS connection shares one TLS context (`sharedTlsContext`). `resumeTls` false: no TLS session
 * stored to resume a host's next connection with, for hosts reached again only after hours. `network`: every
 * connection is checked against it first (src/shared/network-policy.ts); the daemon's callers always pass it.
 */
export function createOutgoingAgents({
  idleMs = 4_000,
  ca,
  resumeTls = true,
  network,
}: { idleMs?: number; ca?: string | Buffer; resumeTls?: boolean; network?: NetworkPolicy } = {}): OutgoingAgents {
  // `timeout` on an Agent only closes idle pooled sockets; an answer in progress is bounded by its own deadline.
  const http = new HttpAgent({ keepAlive: true, timeout: idleMs, scheduling: 'lifo' });
  const https = new HttpsAgent({
    keepAlive: true,
    timeout: idleMs,
    scheduling: 'lifo',
    secureContext: sharedTlsContext(ca),
    ...(resumeTls ? {} : { maxCachedSessions: 0 }),
  });
  if (network) {
    network.guard(http);
    network.guard(https);
  }
  return {
    http,
    https,
    destroy() {
      http.destroy();
      https.destroy();
    },
  };
}

/** Sends one request and resolves with the answer's head; the body is the caller's to read or destroy. */
export function sendRequest(
  url: URL,
  {
    method,
    headers,
    body,
    signal,
    agents,
  }: {
    method: string;
    headers: Record<string, string>;
    body?: string | Uint8Array;
    signal: AbortSignal;
    agents: OutgoingAgents;
  },
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const outgoing = (secure ? httpsRequest : httpRequest)(
      url,
      { method, headers, agent: secure ? agents.https : agents.http, signal },
      resolve,
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

/**
 * Reads a whole body of at most `limit` bytes. More fails with BodyTooLarge; an answer cut short
 * (fewer bytes than it declared, or a closed connection) fails like a network error. On the
 * stream's events, not its async iterator: that one costs a promise and its reactions per chunk,
 * on every answer from every site.
 */
export function readBody(response: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      response.off('data', onData);
      if (!response.destroyed) response.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) fail(new BodyTooLarge(limit));
      else chunks.push(chunk);
    };
    response.on('data', onData);
    response.once('end', () => {
      if (!response.complete) return fail(cutShort());
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, size));
    });
    // Stays on after the end: an error the socket reports later has a listener, so it cannot take the process down.
    response.on('error', fail);
    response.once('close', () => fail(cutShort()));
  });
}

const cutShort = () => Object.assign(new Error('the answer was cut short'), { code: 'ECONNRESET' });

/** Reads and drops at most `limit` bytes of a body, then lets the connection go. */
export async function discardBody(response: IncomingMessage, limit: number): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of response) {
      size += (chunk as Buffer).length;
      if (size > limit) break;
    }
  } finally {
    if (!response.complete && !response.destroyed) response.destroy();
  }
}
