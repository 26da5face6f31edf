import { z } from '@hono/zod-openapi';
import { eventCatalogue } from '../shared/events.js';
import { deliveryCauses } from './webhook-sender.js';
import { webhooksProblems } from './webhooks.errors.js';
import { isWebhookEvent } from './webhook-dispatcher.js';
import { deliveryStatuses, webhookFormats, type DeliveryRow, type WebhookRow } from './webhooks.table.js';

export const WebhookIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'whk_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

/** The events a webhook can subscribe to: the catalogue, less the webhooks' own. */
const deliverableEvents = Object.keys(eventCatalogue).filter((name) => !isWebhookEvent(name));

const EventName = z.string().superRefine((name, ctx) => {
  if (name === '*' || deliverableEvents.includes(name)) return;
  const message = isWebhookEvent(name)
    ? `"${name}" is about webhooks themselves and is never delivered by one (it would loop); alert on it from the log`
    : `unknown event "${name}"; use "*" or names from docs/events.md, e.g. site.down, backup.failed`;
  ctx.addIssue({ code: 'custom', message });
});

const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Checked by the service (`checkWebhookUrl`), so an unusable address is a 422 `invalid-webhook-url`, whatever it holds. */
const WebhookUrl = z.string().openapi({
  description: `Where deliveries are POSTed: an http:// or https:// URL of at most ${MAX_WEBHOOK_URL_LENGTH} characters, without a user name or password (else 422 \`invalid-webhook-url\`). Redirects are not followed.`,
  example: 'https://hooks.example.com/sitewarden',
});

const Events = z
  .array(EventName)
  .min(1, 'events needs at least one event name, or "*"')
  .max(100)
  .refine((names) => new Set(names).size === names.length, 'events lists a name twice')
  .openapi({
    description:
      'Event names from the catalogue (docs/events.md), or `"*"` for all of them. `webhook.*` events are never delivered by webhooks.',
    example: ['site.down', 'site.up', 'backup.failed'],
  });

const Secret = z
  .string()
  .min(16, 'secret must be at least 16 characters')
  .max(256)
  .openapi({ description: 'Signs every delivery (`Sitewarden-Signature`). Stored encrypted; never returned.' });
const Format = z.enum(webhookFormats).openapi({
  description:
    '`json`: `{id, event, occurredAt, data}`; `slack`: `{"text": "…"}`, one readable line (Slack, Mattermost, Rocket.Chat incoming webhooks).',
});

export const CreateWebhookInput = z
  .object({ url: WebhookUrl, events: Events, secret: Secret.optional(), format: Format.default('json') })
  .strict()
  .openapi('CreateWebhookInput');

export const UpdateWebhookInput = z
  .object({
    url: WebhookUrl.optional(),
    events: Events.optional(),
    secret: Secret.nullable()
      .optional()
      .openapi({ description: 'A new secret; null removes it (deliveries are then unsigned).' }),
    format: Format.optional(),
  })
  .strict()
  .openapi('UpdateWebhookInput');

/** The URL as it is stored, or `invalid-webhook-url` saying what is wrong with it. */
export function checkWebhookUrl(input: string): string {
  const invalid = (reason: string) => webhooksProblems.invalidUrl.create(`url ${reason}`, { field: 'url' });
  if (input.length > MAX_WEBHOOK_URL_LENGTH)
    throw invalid(`is ${input.length} characters long; at most ${MAX_WEBHOOK_URL_LENGTH} are allowed`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw invalid('is not a URL; give an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('must be an http:// or https:// URL');
  if (!url.hostname) throw invalid('has no host');
  if (url.username !== '' || url.password !== '')
    throw invalid('must not carry a user name or password; set a `secret` to authenticate deliveries');
  return input;
}

export type CreateWebhook = z.infer<typeof CreateWebhookInput>;
export type UpdateWebhook = z.infer<typeof UpdateWebhookInput>;

export const WebhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    format: z.enum(webhookFormats),
    hasSecret: z
      .boolean()
      .openapi({ description: 'Whether deliveries are signed. The secret itself is never returned.' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Webhook');

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ description: 'Also sent as `Sitewarden-Delivery`.' }),
    webhookId: z.string(),
    eventId: z.string().openapi({ description: 'The event’s `id` (the same in every webhook’s delivery of it).' }),
    event: z.string(),
    status: z.enum(deliveryStatuses).openapi({
      description:
        '`pending` (waiting for its next attempt), `succeeded` (a 2xx answer) or `failed` (every attempt failed).',
    }),
    attempts: z.number().int(),
    nextAttemptAt: z.string().nullable(),
    lastAttempt: z
      .object({
        at: z.string(),
        status: z.number().int().nullable().openapi({ description: 'The receiver’s HTTP status, if it answered.' }),
        cause: z.enum(deliveryCauses).nullable().openapi({
          description:
            'Why it failed: `dns`, `connect`, `tls`, `timeout`, `http_status` (a non-2xx answer), `protocol` or `address_not_allowed` (the receiver is at an address the daemon does not connect to; see `SITEWARDEN_ALLOWED_NETWORKS`).',
        }),
        error: z.string().nullable(),
        durationMs: z.number().int(),
      })
      .nullable(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .openapi('WebhookDelivery');

export function webhookView(row: WebhookRow): z.infer<typeof WebhookSchema> {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    format: row.format,
    hasSecret: row.sealedSecret !== null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function deliveryView(row: DeliveryRow): z.infer<typeof DeliverySchema> {
  return {
    id: row.id,
    webhookId: row.webhookId,
    eventId: row.eventId,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    lastAttempt: row.lastAttemptAt
      ? {
          at: row.lastAttemptAt.toISOString(),
          status: row.lastStatus,
          cause: (row.lastCause as (typeof deliveryCauses)[number] | null) ?? null,
          error: row.lastError,
          durationMs: row.lastDurationMs ?? 0,
        }
      : null,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}
