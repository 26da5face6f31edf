import type { Logger } from 'pino';
import type { StateDatabase } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import { createShardedProbes, type ShardSite } from './sharded-probes.js';
import { createShardLeases, shardOf } from './uptime-leases.js';
import type { MonitoredSite, UptimeRepository } from './uptime.repository.js';
import type { UptimeScheduler } from './uptime-scheduler.js';

/** How long a worker's stop waits for the probes it claimed to run before it gives its shards back. */
const STOP_DRAIN_MS = 5_000;
/**
 * How far before the last reconciliation began the next one reads changes from: a change carries its writer's
 * clock (another process's, maybe another machine's) and commits a moment after it, so it may land behind
 * its time.
 */
const CHANGE_MARGIN_MS = 30_000;

/** Where the cluster's uptime workers meet: the database, and this worker's id among them. */
export interface UptimeCluster {
  state: StateDatabase;
  workerId: string;
  /** How long a shard's lease lasts unrenewed (renewed a third of it apart): a dead worker's shards move after it. */
  leaseMs: number;
}

/**
 * One uptime worker of a cluster (issue 34; docs/cluster.md, "Uptime"): the sites of the shards this process
 * leases (uptime-leases.ts) are monitored here, probed slot by slot as claimed (sharded-probes.ts). Every
 * renewal (a third of a lease apart) also reconciles the monitors held here with the database, since a
 * site connected, removed or given new settings through another process is news only there: a new site of
 * a held shard is tracked, a gone one untracked, one whose settings or address changed tracked again. The
 * reconciliation reads every connected site only when a digest of which sites are connected changed; else
 * only the sites and monitors written since the last one (every few seconds in each worker, over thousands
 * of sites, a whole read would cost more than the probes).
 * A shard lost is untracked once its claimed slots are probed (`onDrop`).
 */
export function createClusterProbing({
  cluster,
  repository,
  scheduler,
  clock,
  logger,
  now,
  fingerprint,
  track,
  forget,
}: {
  cluster: UptimeCluster;
  repository: UptimeRepository;
  scheduler: UptimeScheduler;
  clock: Clock;
  logger: Logger;
  now: () => number;
  /** What of a site's row its monitor follows (address and settings): tracked again when it changes. */
  fingerprint: (site: MonitoredSite) => string;
  /** Puts the site's monitor in memory (not scheduled: the caller schedules); answers its interval, or null if paused. */
  track: (site: MonitoredSite) => ShardSite | null;
  /** Takes the site's monitor out of memory (its probes already written or buffered stay). */
  forget: (siteId: string) => void;
}) {
  const leases = createShardLeases({
    state: cluster.state,
    workerId: cluster.workerId,
    clock,
    leaseMs: cluster.leaseMs,
  });
  const followed = new Map<string, string>();
  /** Sites removed since the last reconciliation began: a read that started before their removal does not bring them back. */
  const removedLately = new Set<string>();
  const held = (siteId: string) => leases.held().has(shardOf(siteId));

  /** Tracks the site from its row; answers what to schedule (null: paused). */
  function follow(site: MonitoredSite): ShardSite | null {
    followed.set(site.siteId, fingerprint(site));
    return track(site);
  }

  function unfollow(siteId: string): void {
    followed.delete(siteId);
    forget(siteId);
  }

  const probes = createShardedProbes({
    leases,
    scheduler,
    clock,
    sitesOf: async (shards) => {
      const wanted = new Set(shards);
      const sites: ShardSite[] = [];
      for (const site of await repository.connectedSites(now())) {
        if (!wanted.has(shardOf(site.siteId))) continue;
        const scheduled = follow(site);
        if (scheduled) sites.push(scheduled);
      }
      return sites;
    },
    // A shard given away is forgotten here once the slots it claimed are probed; one taken back meanwhile stays.
    onDrop: (siteIds) => {
      for (const siteId of siteIds) if (!held(siteId)) unfollow(siteId);
    },
  });

  /** Brings a held site's monitor here in line with its row (tracked again if its address or settings changed). */
  function apply(site: MonitoredSite): void {
    if (followed.get(site.siteId) === fingerprint(site)) return;
    const scheduled = follow(site);
    if (scheduled) probes.upsert(scheduled);
    else probes.remove(site.siteId);
  }

  function drop(siteId: string): void {
    probes.remove(siteId);
    unfollow(siteId);
  }

  /** Every connected site read: the held ones followed, those followed here and no longer there dropped. */
  async function reconcileAll(): Promise<void> {
    const sites = await repository.connectedSites(now());
    const present = new Set<string>();
    for (const site of sites) {
      if (!held(site.siteId) || removedLately.has(site.siteId)) continue;
      present.add(site.siteId);
      apply(site);
    }
    for (const siteId of [...followed.keys()]) if (held(siteId) && !present.has(siteId)) drop(siteId);
  }

  /** Only the sites written since the last reconciliation (less a margin) read. */
  async function reconcileChanges(since: number): Promise<void> {
    for (const site of await repository.monitorChanges(since)) {
      if (!held(site.siteId) || removedLately.has(site.siteId)) continue;
      if (site.connected) apply(site);
      else if (followed.has(site.siteId)) drop(site.siteId);
    }
  }

  /**
   * Which sites are connected, as a digest, and where the last reconciliation began: while the digest stays,
   * no site came or went, and the sites written since then (less CHANGE_MARGIN_MS) are all that can differ.
   */
  let known: { digest: string; since: number } | undefined;

  async function reconcile(): Promise<void> {
    removedLately.clear();
    const began = now();
    // The digest is read before the sites: a site that comes or goes between the reads changes the next digest.
    const digest = await repository.connectedDigest();
    if (known?.digest === digest) await reconcileChanges(known.since);
    else await reconcileAll();
    known = { digest, since: began - CHANGE_MARGIN_MS };
  }

  let timer: NodeJS.Timeout | undefined;
  let cycle: Promise<void> = Promise.resolve();
  /** Renews the leases (taking, giving back shards), then reconciles; one at a time, a failure logged. */
  const renew = () => {
    cycle = cycle
      .then(async () => {
        await probes.renew();
        await reconcile();
      })
      .catch((error: unknown) => logger.error({ err: error }, 'renewing this uptime worker’s shards failed'));
    return cycle;
  };

  return {
    /** Whether this worker holds the site's shard (its monitor is here). */
    held,

    /** A site's monitor tracked here (connected, or its settings changed in this process): scheduled, or not if paused. */
    schedule(siteId: string, intervalMs: number, paused: boolean): void {
      if (paused) probes.remove(siteId);
      else probes.upsert({ siteId, intervalMs });
    },

    /** A site removed (a notice of this process): no longer probed, and a reconciliation under way does not bring it back. */
    removed(siteId: string): void {
      removedLately.add(siteId);
      probes.remove(siteId);
      followed.delete(siteId);
    },

    /** Joins the workers: takes this worker's share of the shards, then renews a third of a lease apart. */
    async start(): Promise<void> {
      await renew();
      timer = setInterval(() => void renew(), Math.max(100, Math.floor(cluster.leaseMs / 3)));
      timer.unref();
    },

    /** Claims the next second of the held shards' slots and queues their probes. */
    tick(): void {
      void probes.tick().catch((error: unknown) => logger.error({ err: error }, 'claiming uptime slots failed'));
    },

    /** Stops renewing, lets the claimed probes run, gives the shards back. */
    async stop(): Promise<void> {
      clearInterval(timer);
      await cycle;
      await probes.stop(STOP_DRAIN_MS);
    },
  };
}

export type ClusterProbing = ReturnType<typeof createClusterProbing>;
