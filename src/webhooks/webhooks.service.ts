import net from 'node:net';
import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import { isAddressNotAllowed, networkProblems, type NetworkPolicy } from '../shared/network-policy.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';
import { webhooksProblems } from './webhooks.errors.js';
import type { WebhooksRepository } from './webhooks.repository.js';
import { checkWebhookUrl, type CreateWebhook, type UpdateWebhook } from './webhooks.schemas.js';
import type { DeliveryRow, NewWebhookRow, WebhookRow } from './webhooks.table.js';

/** Names that are loopback wherever the daemon runs (RFC 6761): refused at once unless loopback is allowed. */
const isLocalhostName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/**
 * Webhook subscriptions: what is sent where. The dispatcher does the sending.
 * A URL whose host is an IP address (or `localhost`) the network boundary refuses is refused when
 * the webhook is created or changed (`address-not-allowed`), not only at each delivery; a host
 * name is checked at delivery, on the address it resolves to then (no DNS lookup here).
 */
export function createWebhooksService({
  repository,
  dispatcher,
  secrets,
  clock,
  network,
}: {
  repository: WebhooksRepository;
  dispatcher: WebhookDispatcher;
  secrets: SecretBox;
  clock: Clock;
  network: Pick<NetworkPolicy, 'check'>;
}) {
  /** The URL as stored: checkWebhookUrl's checks, then the boundary's on a literal address. */
  function checkUrl(input: string): string {
    const url = checkWebhookUrl(input);
    // WHATWG URL parsing has already made `http://2130706433/` or `http://0x7f.1/` into 127.0.0.1.
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    // localhost is loopback at 127.0.0.1 or ::1: refused only when neither is allowed.
    const candidates = net.isIP(host) ? [host] : isLocalhostName(host) ? ['127.0.0.1', '::1'] : [];
    let refusal: unknown;
    for (const address of candidates) {
      try {
        network.check(host, address);
        return url;
      } catch (error) {
        if (!isAddressNotAllowed(error)) throw error;
        refusal ??= error;
      }
    }
    if (isAddressNotAllowed(refusal))
      throw networkProblems.addressNotAllowed.create(
        `url: ${refusal.message}`,
        { field: 'url', host: refusal.host, address: refusal.address, addressClass: refusal.addressClass },
        { cause: refusal },
      );
    return url;
  }

  async function get(id: string): Promise<WebhookRow> {
    const row = await repository.find(id);
    if (!row) throw webhooksProblems.notFound.create(`there is no webhook ${id}`);
    return row;
  }

  return {
    get,
    list: ({ limit, before }: { limit: number; before?: string }) => repository.list({ limit, before }),

    async create(input: CreateWebhook): Promise<WebhookRow> {
      const url = checkUrl(input.url);
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

    async update(id: string, patch: UpdateWebhook): Promise<WebhookRow> {
      await get(id);
      const changes: Partial<NewWebhookRow> = { updatedAt: clock.now() };
      if (patch.url !== undefined) changes.url = checkUrl(patch.url);
      if (patch.events !== undefined) changes.events = patch.events;
      if (patch.format !== undefined) changes.format = patch.format;
      if (patch.secret !== undefined) changes.sealedSecret = patch.secret === null ? null : secrets.seal(patch.secret);
      return (await repository.update(id, changes)) ?? get(id);
    },

    async delete(id: string): Promise<void> {
      if (!(await repository.delete(id))) throw webhooksProblems.notFound.create(`there is no webhook ${id}`);
    },

    async deliveries(id: string, { limit, before }: { limit: number; before?: string }): Promise<DeliveryRow[]> {
      await get(id);
      return repository.listDeliveries({ webhookId: id, limit, before });
    },

    /** Queues a `webhook.test` delivery to the webhook, signed and retried like any other. */
    async test(id: string): Promise<DeliveryRow> {
      const webhook = await get(id);
      const now = clock.now();
      const enqueued = await dispatcher.deliver(webhook, {
        id: createId('evt', now),
        event: 'webhook.test',
        occurredAt: now.toISOString(),
        data: { webhookId: webhook.id, message: 'A test delivery from Sitewarden' },
      });
      if ('gone' in enqueued) throw webhooksProblems.notFound.create(`there is no webhook ${id}`);
      if ('full' in enqueued)
        throw webhooksProblems.backlogFull.create(
          `webhook ${id} already has the maximum number of deliveries waiting; see GET /api/webhooks/${id}/deliveries`,
        );
      return enqueued.delivery;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
