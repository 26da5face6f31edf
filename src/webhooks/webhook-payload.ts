import { createHmac } from 'node:crypto';
import type { WebhookFormat } from './webhooks.table.js';

export interface WebhookEvent {
  /** The same in every webhook's delivery of this occurrence. */
  id: string;
  event: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

/**
 * The request body: `json` is the event as it is; `slack` is one readable line as an
 * incoming-webhook message (`{"text": …}`), which Slack, Mattermost and Rocket.Chat accept.
 */
export function webhookBody(format: WebhookFormat, event: WebhookEvent): string {
  if (format === 'json') return JSON.stringify(event);
  return JSON.stringify({ text: summaryLine(event) });
}

/** e.g. `Sitewarden site.down: https://example.com (cause: connect, firstFailureAt: 2026-…)`. */
function summaryLine(event: WebhookEvent): string {
  const { url, ...rest } = event.data;
  const details = Object.entries(rest)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
  const subject = typeof url === 'string' ? `: ${url}` : '';
  return `Sitewarden ${event.event}${subject}${details ? ` (${details})` : ''}`.replace(/\s+/g, ' ').slice(0, 2000);
}

/** `v1=` HMAC-SHA256, in hex, of `${timestamp}.${body}` keyed with the webhook's secret. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
