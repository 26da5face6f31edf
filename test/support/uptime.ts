import { createId } from '../../src/shared/ids.js';
import { DEFAULT_UPTIME_CONFIG, type UptimeConfig } from '../../src/uptime/uptime.config.js';
import type { StatusesOf } from '../../src/uptime/index.js';
import { createFakeClock, createTestApp, insertSiteRow } from './test-app.js';

/**
 * The whole app with a fake clock and the uptime monitor started, and sites inserted as
 * connected rows pointing at loopback targets (no WordPress needed to be probed).
 */
export async function createUptimeTestApp(options: { uptime?: Partial<UptimeConfig>; start?: Date } = {}) {
  const clock = createFakeClock(options.start ?? new Date('2026-03-02T10:00:00Z'));
  const t = createTestApp({
    clock,
    config: { uptime: { ...DEFAULT_UPTIME_CONFIG, confirmations: 2, recheckDelaySeconds: 5, ...options.uptime } },
  });
  await t.services.uptime.start();

  /** A site's row, and for a connected one its notice, handled (the site tracked) when this resolves. */
  async function addSite(url: string, state: 'connected' | 'pending' = 'connected'): Promise<string> {
    const now = clock.now();
    const id = createId('site', now);
    insertSiteRow(t, {
      id,
      url,
      restUrl: `${url}/wp-json/`,
      state,
      createdAt: now,
      updatedAt: now,
      connectedAt: state === 'connected' ? now : null,
    });
    if (state === 'connected') t.services.lifecycle.connected({ id, url });
    await t.services.uptime.settled();
    return id;
  }

  /** Moves the clock to the site's next due time and runs every probe due then. */
  async function probeNext(siteId: string): Promise<number> {
    const due = t.services.uptime.nextDueAt(siteId);
    if (due === undefined) throw new Error(`${siteId} is not scheduled`);
    if (due > clock.now().getTime()) clock.set(new Date(due));
    return t.services.uptime.runDue();
  }

  return {
    ...t,
    clock,
    addSite,
    probeNext,
    stop: async () => {
      await t.services.uptime.stop();
      await t.close();
    },
  };
}

export type UptimeTestApp = Awaited<ReturnType<typeof createUptimeTestApp>>;

/** A site's uptime status as the site listing shows it (null: not monitored). */
export async function statusOf(uptime: { statusesOf: StatusesOf }, siteId: string) {
  return (await uptime.statusesOf([siteId])).get(siteId) ?? null;
}
