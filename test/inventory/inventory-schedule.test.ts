import { describe, expect, it } from 'vitest';
import { createInventorySync } from '../../src/inventory/inventory.sync.js';
import type { SiteTaskQueue } from '../../src/jobs/site-task-queue.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createEvents } from '../../src/shared/event-bus.js';
import type { SecretBox } from '../../src/shared/secret-box.js';
import type { SitesRepository } from '../../src/sites/index.js';

/**
 * The scheduled inventory refresh: every site once per interval (12 hours by default), each at a
 * slot of its own, so sites connected together do not stay bunched together; failures retried
 * after an hour. The tick is driven minute by minute on a fake clock; the queue only records.
 */
const MINUTE = 60_000;
const START = new Date('2026-01-14T00:00:00Z');

function schedule(siteCount: number) {
  const clock = createFakeClock(START);
  // Every site synced (attempted) at the same instant, as after connecting many at once.
  const sites = Array.from({ length: siteCount }, (_, i) => ({
    id: `site_${String(i).padStart(26, '0')}`,
    lastSyncAttemptAt: START as Date | null,
    failed: false,
  }));
  const byId = new Map(sites.map((site) => [site.id, site]));
  const started: string[] = [];
  const sync = createInventorySync({
    repository: { syncAttempts: () => sites.map((site) => ({ ...site })) } as unknown as SitesRepository,
    inventories: {} as never,
    access: {} as never,
    secrets: {} as SecretBox,
    queue: {
      isBusy: () => false,
      run: (id: string) => {
        started.push(id);
        byId.get(id)!.lastSyncAttemptAt = clock.now();
        return Promise.resolve();
      },
    } as unknown as SiteTaskQueue,
    clock,
    events: createEvents(),
    intervalMinutes: 720,
  });
  return { sync, clock, sites, started };
}

describe('the scheduled inventory refresh', () => {
  it('syncs every site once per 12 hours, spread over the interval', async () => {
    const { sync, clock, started } = schedule(2000);
    const perMinute: number[] = [];
    for (let minute = 1; minute <= 720; minute++) {
      clock.advance(MINUTE);
      perMinute.push(await sync.enqueueDue());
    }
    expect(started).toHaveLength(2000);
    expect(new Set(started).size).toBe(2000);
    // 2000 sites over 720 minutes: about 2.8 a minute; never a burst.
    expect(Math.max(...perMinute)).toBeLessThanOrEqual(12);
    // The next 12 hours: each again, once.
    for (let minute = 1; minute <= 720; minute++) {
      clock.advance(MINUTE);
      await sync.enqueueDue();
    }
    expect(started).toHaveLength(4000);
  });

  it('retries a failed sync after an hour, not at its next slot', async () => {
    const { sync, clock, sites, started } = schedule(1);
    sites[0]!.failed = true;
    clock.advance(59 * MINUTE);
    // Unless its slot happens to fall in that hour, nothing yet.
    const early = await sync.enqueueDue();
    clock.advance(MINUTE);
    expect(early + (await sync.enqueueDue())).toBeGreaterThanOrEqual(1);
    expect(started).toEqual([sites[0]!.id]);
  });
});
