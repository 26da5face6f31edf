import { performance } from 'node:perf_hooks';
import { isAddressNotAllowed, type NetworkPolicy } from '../shared/network-policy.js';
import { createOutgoingAgents, discardBody, sendRequest } from '../shared/outgoing-http.js';
import { MAX_ANSWER_BYTES } from './webhooks.config.js';

/** Why an attempt failed; a stable vocabulary shown in the deliveries list and logged when one gives up. */
export const deliveryCauses = [
  'dns',
  'connect',
  'tls',
  'timeout',
  'http_status',
  'protocol',
  'address_not_allowed',
] as const;
type DeliveryCause = (typeof deliveryCauses)[number];

export interface SendOutcome {
  ok: boolean;
  status: number | null;
  cause: DeliveryCause | null;
  /** Readable reason of a failure; names the receiver's host, never its path (Slack's carries a secret). */
  error: string | null;
  durationMs: number;
  /** The sender was closed (shutdown) mid-attempt: not a failure of the receiver. */
  aborted: boolean;
}

export interface WebhookSender {
  send(request: { url: string; headers: Record<string, string>; body: string }): Promise<SendOutcome>;
  close(): Promise<void>;
}

/**
 * One POST per attempt with a time limit covering connect, headers and body, reading at most
 * MAX_ANSWER_BYTES of the answer: a receiver that hangs or floods costs one connection for at
 * most `timeoutMs`. No redirects are followed (a 3xx is a failed attempt). Never throws. A receiver at an
 * address `network` refuses is a failed attempt with cause `address_not_allowed`; nothing is sent.
 */
export function createWebhookSender({
  timeoutMs,
  userAgent,
  network,
}: {
  timeoutMs: number;
  userAgent: string;
  network: NetworkPolicy;
}): WebhookSender {
  const agents = createOutgoingAgents({ network });
  const closing = new AbortController();

  return {
    async send({ url, headers, body }) {
      const started = performance.now();
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = AbortSignal.any([deadline, closing.signal]);
      const finish = (outcome: Omit<SendOutcome, 'durationMs' | 'aborted'>): SendOutcome => ({
        ...outcome,
        durationMs: Math.round(performance.now() - started),
        aborted: closing.signal.aborted,
      });
      try {
        const response = await sendRequest(new URL(url), {
          method: 'POST',
          headers: { 'user-agent': userAgent, 'content-type': 'application/json', ...headers },
          body,
          signal,
          agents,
        });
        await discardBody(response, MAX_ANSWER_BYTES);
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        return finish({
          ok,
          status,
          cause: ok ? null : 'http_status',
          error: ok ? null : `the receiver answered ${status}`,
        });
      } catch (error) {
        const { cause, message } = classify(error, url, deadline.aborted);
        return finish({ ok: false, status: null, cause, error: message });
      }
    },
    async close() {
      closing.abort();
      agents.destroy();
    },
  };
}

function classify(error: unknown, url: string, timedOut: boolean): { cause: DeliveryCause; message: string } {
  const host = hostOf(url);
  if (isAddressNotAllowed(error)) return { cause: 'address_not_allowed', message: error.message };
  const code = String(
    (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code ?? '',
  );
  if (timedOut || code === 'ETIMEDOUT') return { cause: 'timeout', message: `${host} did not answer in time` };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return { cause: 'dns', message: `the host name ${host} does not resolve` };
  if (
    code === 'ECONNREFUSED' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE'
  )
    return {
      cause: 'connect',
      message: `${host}: ${code === 'ECONNREFUSED' ? 'connection refused' : 'connection failed or closed'} (${code})`,
    };
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))
    return { cause: 'tls', message: `TLS with ${host} failed (${code})` };
  return { cause: 'protocol', message: `${host}: ${code || (error as Error).message || 'the request failed'}` };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the receiver';
  }
}
