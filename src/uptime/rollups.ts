import type { Logger } from 'pino';
import type { UptimeConfig } from './uptime.config.js';
import type { BucketRow, UptimeRepository } from './uptime.repository.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
const hourStart = (at: number) => at - (at % HOUR_MS);
export const dayStart = (at: number) => at - (at % DAY_MS);
/** Probes may finish this long after their hour ends (timeouts, re-checks) before it is closed. */
const LATE_PROBE_MS = 90_000;
const PRUNE_CHUNK = 20_000;

function emptyBucket(siteId: string, bucket: number): BucketRow {
  return { siteId, bucket, up: 0, down: 0, responseSum: 0, responseCount: 0, responseMin: null, responseMax: null };
}

function addToBucket(bucket: BucketRow, up: boolean, responseMs: number | null): void {
  if (up) bucket.up++;
  else bucket.down++;
  if (responseMs !== null) {
    bucket.responseSum += responseMs;
    bucket.responseCount++;
    bucket.responseMin = bucket.responseMin === null ? responseMs : Math.min(bucket.responseMin, responseMs);
    bucket.responseMax = bucket.responseMax === null ? responseMs : Math.max(bucket.responseMax, responseMs);
  }
}

/**
 * The hours still open live in memory (one small bucket per site) and are written when the
 * hour closes, so a probe costs no roll-up write. After a restart the open hour is rebuilt
 * from the raw probes, and hours closed while the daemon was stopped are re-derived from them.
 */
export function createHourlyRollups({ repository }: { repository: UptimeRepository }) {
  const open = new Map<string, BucketRow[]>();
  /**
   * Buckets taken out of `open` whose write has not finished: still counted by `openBuckets`, so that a
   * report reading the written hours meanwhile neither misses them nor counts them twice.
   */
  const closing = new Map<string, BucketRow[]>();

  function bucketFor(siteId: string, at: number): BucketRow {
    const hour = hourStart(at);
    let buckets = open.get(siteId);
    if (!buckets) open.set(siteId, (buckets = []));
    let bucket = buckets.find((candidate) => candidate.bucket === hour);
    if (!bucket) buckets.push((bucket = emptyBucket(siteId, hour)));
    return bucket;
  }

  return {
    add(siteId: string, at: number, up: boolean, responseMs: number | null): void {
      addToBucket(bucketFor(siteId, at), up, responseMs);
    },
    openBuckets(siteId: string): readonly BucketRow[] {
      const buckets = open.get(siteId) ?? [];
      const written = closing.get(siteId);
      return written ? [...written, ...buckets] : buckets;
    },
    forget: (siteId: string) => void open.delete(siteId),

    /** Writes every open bucket of an hour before `before` and forgets it. */
    async closeBefore(before: number): Promise<number> {
      const closed: BucketRow[] = [];
      for (const [siteId, buckets] of open) {
        const keep = buckets.filter((bucket) => bucket.bucket >= before);
        if (keep.length === buckets.length) continue;
        const leaving = buckets.filter((bucket) => bucket.bucket < before);
        closed.push(...leaving);
        closing.set(siteId, [...(closing.get(siteId) ?? []), ...leaving]);
        if (keep.length === 0) open.delete(siteId);
        else open.set(siteId, keep);
      }
      try {
        await repository.addHourly(closed, Math.max(before, await repository.mark('hourly')));
      } finally {
        for (const bucket of closed) {
          const left = closing.get(bucket.siteId)?.filter((candidate) => candidate !== bucket) ?? [];
          if (left.length === 0) closing.delete(bucket.siteId);
          else closing.set(bucket.siteId, left);
        }
      }
      return closed.length;
    },

    /** At start: re-derives closed hours from raw probes and reloads the open hour into memory. */
    async rebuild(now: number, rawRetentionMs: number): Promise<void> {
      const current = hourStart(now);
      const from = Math.max(await repository.mark('hourly'), hourStart(now - rawRetentionMs));
      if (from < current) await repository.rebuildHourly(from, current);
      for (const probe of await repository.probesSince(current))
        addToBucket(bucketFor(probe.siteId, probe.at), probe.up, probe.responseMs);
    },
  };
}

export type HourlyRollups = ReturnType<typeof createHourlyRollups>;

/**
 * Cluster mode's hours (issue 34): no process holds a site's open hour, since its probes move between uptime
 * workers with its shard; the hours are closed from the raw probes every worker wrote, as a restart catches up.
 */
export function closeHoursFromProbes({
  repository,
  config,
}: {
  repository: UptimeRepository;
  config: Pick<UptimeConfig, 'rawRetentionHours'>;
}): Pick<HourlyRollups, 'closeBefore'> {
  return {
    async closeBefore(before: number): Promise<number> {
      const from = Math.max(await repository.mark('hourly'), hourStart(before - config.rawRetentionHours * HOUR_MS));
      if (from >= before) return 0;
      await repository.rebuildHourly(from, before);
      return (before - from) / HOUR_MS;
    },
  };
}

/**
 * The periodic job: closes finished hours, rolls finished days up, and prunes by retention.
 * Raw probes are deleted in chunks, yielding between them so probing keeps its schedule.
 */
export async function runMaintenance({
  repository,
  rollups,
  config,
  now,
  logger,
}: {
  repository: UptimeRepository;
  rollups: Pick<HourlyRollups, 'closeBefore'>;
  config: UptimeConfig;
  now: number;
  logger: Logger;
}) {
  const closedUntil = hourStart(now - LATE_PROBE_MS);
  const hoursClosed = await rollups.closeBefore(closedUntil);

  let daysRolled = 0;
  let day = (await repository.mark('daily')) || dayStart(now - config.hourlyRetentionDays * DAY_MS);
  for (; day + DAY_MS <= closedUntil; day += DAY_MS, daysRolled++) await repository.rollupDay(day, day + DAY_MS);

  let rawPruned = 0;
  const rawBefore = now - config.rawRetentionHours * HOUR_MS;
  for (let deleted = PRUNE_CHUNK; deleted === PRUNE_CHUNK; rawPruned += deleted) {
    deleted = await repository.pruneRawChunk(rawBefore, PRUNE_CHUNK);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await repository.pruneRollups(
    hourStart(now - config.hourlyRetentionDays * DAY_MS),
    dayStart(now - config.dailyRetentionDays * DAY_MS),
  );
  logger.debug({ hoursClosed, daysRolled, rawPruned }, 'uptime maintenance done');
  return { hoursClosed, daysRolled, rawPruned };
}
