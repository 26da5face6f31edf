import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';
import { webhooksProblems } from './webhooks.errors.js';
import type { WebhooksRepository } from './webhooks.repository.js';
import { checkWebhookUrl, type CreateWebhook, type UpdateWebhook } from './webhooks.schemas.js';
import type { DeliveryRow, NewWebhookRow, WebhookRow } from './webhooks.table.js';

/** Webhook subscriptions: what is sent where. The dispatcher does the sending. */
export function createWebhooksService({
  repository,
  dispatcher,
  secrets,
  clock,
}: {
  repository: WebhooksRepository;
  dispatcher: WebhookDispatcher;
  secrets: SecretBox;
  clock: Clock;
}) {
  function get(id: string): WebhookRow {
    const row = repository.find(id);
    if (!row) throw webhooksProblems.notFound.create(`there is no webhook ${id}`);
    return row;
  }

  return {
    get,
    list: ({ limit, before }: { limit: number; before?: string }) => repository.list({ limit, before }),

    create(input: CreateWebhook): WebhookRow {
      const url = checkWebhookUrl(input.url);
      const now = clock.now();
      return repository.insert({
        id: createId('whk', now),
        url,
        events: input.events,
        format: input.format,
        sealedSecret: input.secret ? secrets.seal(input.secret) : null,
        createdAt: now,
        updatedAt: now,
      });
    },

    update(id: string, patch: UpdateWebhook): WebhookRow {
      get(id);
      const changes: Partial<NewWebhookRow> = { updatedAt: clock.now() };
      if (patch.url !== undefined) changes.url = checkWebhookUrl(patch.url);
      if (patch.events !== undefined) changes.events = patch.events;
      if (patch.format !== undefined) changes.format = patch.format;
      if (patch.secret !== undefined) changes.sealedSecret = patch.secret === null ? null : secrets.seal(patch.secret);
      return repository.update(id, changes) ?? get(id);
    },

    delete(id: string): void {
      if (!repository.delete(id)) throw webhooksProblems.notFound.create(`there is no webhook ${id}`);
    },

    deliveries(id: string, { limit, before }: { limit: number; before?: string }): DeliveryRow[] {
      get(id);
      return repository.listDeliveries({ webhookId: id, limit, before });
    },

    /** Queues a `webhook.test` delivery to the webhook, signed and retried like any other. */
    test(id: string): DeliveryRow {
      const webhook = get(id);
      const now = clock.now();
      const delivery = dispatcher.deliver(webhook, {
        id: createId('evt', now),
        event: 'webhook.test',
        occurredAt: now.toISOString(),
        data: { webhookId: webhook.id, message: 'A test delivery from Sitewarden' },
      });
      if (!delivery)
        throw webhooksProblems.backlogFull.create(
          `webhook ${id} already has the maximum number of deliveries waiting; see GET /api/webhooks/${id}/deliveries`,
        );
      return delivery;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
