import { createHash } from 'node:crypto';

/**
 * Spreads sites' scheduled work (audits, backups, uptime probes) over its interval: each site has a
 * fixed offset into it (from its id), so a thousand sites handled daily start at a thousand different
 * minutes, and a restart keeps every site's slot. The offset is a whole number of `stepMs`: minutes
 * for daily work, single milliseconds for probes every minute.
 */
export function siteOffsetMs(siteId: string, intervalMs: number, stepMs = 60_000): number {
  const hash = siteHash(siteId).readUInt32BE(0);
  return Math.floor((hash / 0x1_0000_0000) * (intervalMs / stepMs)) * stepMs;
}

/** The most recent slot of the site at or before `now`. */
export function latestSlot(siteId: string, intervalMs: number, now: Date): Date {
  return latestSlotAt(siteOffsetMs(siteId, intervalMs), intervalMs, now);
}

/** The same from an offset already computed (a tick over thousands of sites keeps them). */
export function latestSlotAt(offsetMs: number, intervalMs: number, now: Date): Date {
  return new Date(Math.floor((now.getTime() - offsetMs) / intervalMs) * intervalMs + offsetMs);
}

/** Due when the latest slot has passed since the last scheduled run (never run: due now). */
export function isDue(siteId: string, intervalMs: number, lastScheduledAt: Date | null, now: Date): boolean {
  return lastScheduledAt === null || lastScheduledAt < latestSlot(siteId, intervalMs, now);
}

/**
 * sha256 of a site's id, where a site's fixed placements come from: its offset in an interval (the first
 * four bytes, above) and its uptime shard in a cluster (the next two, uptime-leases.ts).
 */
export function siteHash(siteId: string): Buffer {
  return createHash('sha256').update(siteId).digest();
}
