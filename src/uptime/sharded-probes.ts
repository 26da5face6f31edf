import type { Clock } from '../shared/clock.js';
import { shardOf, type LeaseChange, type ShardLeases } from './uptime-leases.js';
import type { UptimeScheduler } from './uptime-scheduler.js';

/**
 * How long a lost shard's sites stay in the scheduler after its claim here ended: its probes due before
 * then may still wait in a start slice or the queue (a removed site's queued probe does nothing), and a
 * probe's own time limit is 5 s.
 */
const DRAIN_GRACE_MS = 10_000;

/** A monitored site as the sharded probes schedule it. */
export interface ShardSite {
  siteId: string;
  intervalMs: number;
}

/**
 * An uptime worker's share of the cluster's probes (issue 34; uptime-leases.ts): the uptime scheduler
 * holds the sites of the shards this worker leases, and each tick probes only the slots it claimed.
 * `renew` (a third of a lease apart) applies what the leases changed: a shard gained brings its sites
 * in from where the last holder's claim ended; a shard lost stops being claimed at once, and its sites
 * leave the scheduler once the slots already claimed here have been probed (they are this worker's to
 * make: the next holder starts after them), DRAIN_GRACE_MS after the claim's end.
 */
export function createShardedProbes({
  leases,
  scheduler,
  clock,
  sitesOf,
  onDrop,
  horizonMs = 1_000,
}: {
  leases: ShardLeases;
  scheduler: UptimeScheduler;
  clock: Clock;
  /** The monitored sites of these shards (cluster mode: from the sites table, by shard). */
  sitesOf: (shards: readonly number[]) => Promise<ShardSite[]>;
  /** Told the sites of a lost shard as they leave the scheduler (its claimed slots probed). */
  onDrop?: (siteIds: readonly string[]) => void;
  /** How far ahead a tick claims and queues (the uptime tick's: a second). */
  horizonMs?: number;
}) {
  /** The sites scheduled here, by shard. */
  const sites = new Map<number, Set<string>>();
  const shardOfSite = new Map<string, number>();
  /** The shards claimed by the last tick, and how far each one's claim here reaches. */
  let claimed: ReadonlySet<number> = new Set();
  const claimedUntil = new Map<number, number>();
  /** Shards lost whose sites stay until the slots claimed here have passed. */
  const draining = new Map<number, number>();
  let stopping = false;
  /**
   * Renewals and ticks take turns: a tick's claim answered with a shard that a renewal gives back
   * meanwhile must reach that shard's drain before the drain ends, or the claimed slots would go unprobed.
   */
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const next = turn.then(work, work);
    turn = next.catch(() => undefined);
    return next;
  };

  function schedule(site: ShardSite, shard: number, from: number | undefined): void {
    scheduler.upsert(site.siteId, site.intervalMs, from);
    shardOfSite.set(site.siteId, shard);
    let members = sites.get(shard);
    if (!members) sites.set(shard, (members = new Set()));
    members.add(site.siteId);
  }

  function drop(shard: number): void {
    const leaving = [...(sites.get(shard) ?? [])];
    for (const siteId of leaving) {
      scheduler.remove(siteId);
      shardOfSite.delete(siteId);
    }
    sites.delete(shard);
    draining.delete(shard);
    claimedUntil.delete(shard);
    if (leaving.length > 0) onDrop?.(leaving);
  }

  async function apply({ gained, lost }: LeaseChange): Promise<void> {
    const now = clock.now().getTime();
    for (const shard of lost) draining.set(shard, claimedUntil.get(shard) ?? now);
    if (gained.length === 0) return;
    const resumeFrom = new Map(gained.map(({ shard, resumeFrom }) => [shard, resumeFrom?.getTime()]));
    for (const shard of resumeFrom.keys()) draining.delete(shard);
    for (const site of await sitesOf([...resumeFrom.keys()])) {
      const shard = shardOf(site.siteId);
      if (resumeFrom.has(shard)) schedule(site, shard, resumeFrom.get(shard));
    }
  }

  return {
    /** Renews the leases and applies what changed. */
    renew: (): Promise<LeaseChange> =>
      inTurn(async () => {
        const change = await leases.renew();
        await apply(change);
        return change;
      }),

    /** Claims the next horizon of the held shards' slots and queues their probes; answers how many. */
    tick: (): Promise<number> =>
      inTurn(async () => {
        if (stopping) return 0;
        const now = clock.now().getTime();
        const until = now + horizonMs;
        claimed = await leases.claim(new Date(until));
        for (const shard of claimed) claimedUntil.set(shard, until);
        for (const [shard, end] of draining) if (end + DRAIN_GRACE_MS <= now) drop(shard);
        return scheduler.tick(horizonMs, {
          until,
          accept: (siteId) => {
            const shard = shardOfSite.get(siteId);
            return shard !== undefined && claimed.has(shard);
          },
        });
      }),

    /** A site now monitored (connected, or its interval changed): scheduled here when its shard is held. */
    upsert(site: ShardSite): void {
      const shard = shardOf(site.siteId);
      if (leases.held().has(shard)) schedule(site, shard, undefined);
    },

    remove(siteId: string): void {
      scheduler.remove(siteId);
      const shard = shardOfSite.get(siteId);
      if (shard !== undefined) sites.get(shard)?.delete(siteId);
      shardOfSite.delete(siteId);
    },

    /**
     * Stops claiming, lets the probes already claimed here run (at most a horizon ahead, then the queue
     * empties, within `drainMs`), and gives the shards back: nothing claimed is left unprobed.
     */
    async stop(drainMs = 10_000): Promise<void> {
      stopping = true;
      const deadline = Date.now() + drainMs;
      const lastClaim = Math.max(0, ...claimedUntil.values());
      while (Date.now() < deadline && (clock.now().getTime() < lastClaim || scheduler.pending > 0))
        await new Promise((resolve) => setTimeout(resolve, 50));
      await scheduler.stop();
      await leases.release();
    },
  };
}
