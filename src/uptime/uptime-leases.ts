import { and, count, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { StateDatabase } from '../db/state-db.js';
import { siteHash } from '../jobs/spread.js';
import type { Clock } from '../shared/clock.js';
import { uptimeShardLeases, uptimeWorkers } from './uptime-leases.pg-table.js';

/**
 * Uptime probes sharded over the uptime workers of a cluster (issue 34; docs/design/cluster-state.md,
 * "Uptime leases"), on PostgreSQL. The sites fall into UPTIME_SHARDS shards by a hash of their id; each
 * shard is leased to one worker at a time, which renews its leases while it lives and takes its fair
 * share (the shards over the workers alive, rounded up), giving back what it holds beyond it when
 * workers join. A worker that stops gives its shards back at once; one that dies keeps them until its
 * leases expire, and the others take them then: within `leaseMs` plus one renewal.
 *
 * Exactly one worker probes each slot (a site's probe due at an instant). A holder *claims* its shards'
 * slots ahead of probing them (`claim(until)`: `claimed_until` moves on, only while its lease runs past
 * `until`), and probes only what it claimed; the next holder of a shard probes from where the claim
 * ended: no slot twice, and none skipped except those a worker that died had claimed and not yet probed
 * (a claim reaches a second ahead; a worker starved of CPU may also die with late ones queued), which come
 * again at their next slot. A shard taken over after its holder died is behind, as is one its holder
 * claims late (starved between two ticks): each of its sites whose slot passed meanwhile is probed
 * once, late, then on its schedule. Worker clocks are assumed within a second of each other (NTP): a
 * lease is taken `CLOCK_MARGIN_MS` after it expires by the taker's clock.
 */
export const UPTIME_SHARDS = 256;

/** How long after a lease's end (by the taker's clock) it may be taken: the clocks' possible skew. */
const CLOCK_MARGIN_MS = 1_000;

/** The shard of a site: the two bytes of its hash after the four its schedule's offset uses. */
export function shardOf(siteId: string): number {
  return siteHash(siteId).readUInt16BE(4) % UPTIME_SHARDS;
}

/** A shard taken: probe its sites' slots from `resumeFrom` (where the last holder's claim ended; null: from now). */
interface ShardGain {
  shard: number;
  resumeFrom: Date | null;
}

export interface LeaseChange {
  gained: ShardGain[];
  /** Shards no longer held (given back beyond the fair share, or expired while this worker stalled). */
  lost: number[];
  /** Every shard held now. */
  held: ReadonlySet<number>;
}

export interface ShardLeases {
  readonly workerId: string;
  /** Says this worker is alive, keeps its leases, gives back or takes shards to its fair share. */
  renew(): Promise<LeaseChange>;
  /**
   * Claims the held shards' slots before `until`; answers the shards claimed (a lease that would end
   * before `until` plus the clock margin is not, and its slots stay unclaimed until it is renewed).
   */
  claim(until: Date): Promise<ReadonlySet<number>>;
  /** Gives every shard back (their claims stay, for the next holders) and leaves the workers. */
  release(): Promise<void>;
  held(): ReadonlySet<number>;
}

export function createShardLeases({
  state,
  workerId,
  clock,
  leaseMs,
  clockMarginMs = CLOCK_MARGIN_MS,
}: {
  state: StateDatabase;
  workerId: string;
  clock: Clock;
  /** How long a lease lasts unrenewed; renew at most a third of it apart. */
  leaseMs: number;
  /** The clocks' possible skew (default CLOCK_MARGIN_MS; tests on one machine use less). */
  clockMarginMs?: number;
}): ShardLeases {
  if (state.dialect !== 'postgres') throw new Error('uptime shard leases are for cluster mode (PostgreSQL)');
  let held = new Set<number>();
  let shardsMade = false;
  const at = (ms: number) => new Date(clock.now().getTime() + ms);

  /** A row for every shard, once per process (idempotent: every worker may race to it). */
  async function makeShards(): Promise<void> {
    if (shardsMade) return;
    await state.run((db) =>
      db.execute(
        sql`insert into ${uptimeShardLeases} (shard) select generate_series(0, ${UPTIME_SHARDS - 1}) on conflict do nothing`,
      ),
    );
    shardsMade = true;
  }

  async function renew(): Promise<LeaseChange> {
    await makeShards();
    const now = clock.now();
    const expiresAt = at(leaseMs);
    return state.transaction(async (tx) => {
      // The transaction locks rows another worker's renewal needs (its own, the takeable shards): a holder
      // stalled inside it (a paused VM, a stopped process) would keep its shards past its leases, and stall
      // the others' renewals. PostgreSQL ends such a session, and a wait on one, within a fraction of a lease.
      const bound = String(Math.max(50, Math.floor(leaseMs / 4)));
      await tx.execute(
        sql`select set_config('idle_in_transaction_session_timeout', ${bound}, true), set_config('lock_timeout', ${bound}, true)`,
      );
      await tx
        .insert(uptimeWorkers)
        .values({ id: workerId, expiresAt })
        .onConflictDoUpdate({ target: uptimeWorkers.id, set: { expiresAt } });
      // Workers gone for a whole lease more are forgotten (their leases have long expired).
      await tx.delete(uptimeWorkers).where(lte(uptimeWorkers.expiresAt, new Date(now.getTime() - leaseMs)));
      const [alive] = await tx.select({ n: count() }).from(uptimeWorkers).where(gt(uptimeWorkers.expiresAt, now));
      const fair = Math.ceil(UPTIME_SHARDS / Math.max(1, alive?.n ?? 1));

      const kept = await tx
        .update(uptimeShardLeases)
        .set({ expiresAt })
        .where(and(eq(uptimeShardLeases.holder, workerId), gt(uptimeShardLeases.expiresAt, now)))
        .returning({ shard: uptimeShardLeases.shard });
      let keep = kept.map((row) => row.shard).sort((a, b) => a - b);
      if (keep.length > fair) {
        const extra = keep.slice(fair);
        keep = keep.slice(0, fair);
        await tx
          .update(uptimeShardLeases)
          .set({ holder: null, expiresAt: null })
          .where(and(eq(uptimeShardLeases.holder, workerId), inArray(uptimeShardLeases.shard, extra)));
      }

      const gained: ShardGain[] = [];
      const wanted = fair - keep.length;
      if (wanted > 0) {
        // Free shards, or ones whose holder's lease ended (past the clock margin); ours that expired come back too.
        const takeable = or(
          isNull(uptimeShardLeases.holder),
          lte(uptimeShardLeases.expiresAt, new Date(now.getTime() - clockMarginMs)),
          and(eq(uptimeShardLeases.holder, workerId), lte(uptimeShardLeases.expiresAt, now)),
        );
        const candidates = tx
          .select({ shard: uptimeShardLeases.shard })
          .from(uptimeShardLeases)
          .where(takeable)
          .orderBy(uptimeShardLeases.shard)
          .limit(wanted)
          .for('update', { skipLocked: true });
        const taken = await tx
          .update(uptimeShardLeases)
          .set({ holder: workerId, expiresAt })
          .where(inArray(uptimeShardLeases.shard, candidates))
          .returning({ shard: uptimeShardLeases.shard, claimedUntil: uptimeShardLeases.claimedUntil });
        for (const row of taken) {
          gained.push({ shard: row.shard, resumeFrom: row.claimedUntil });
          keep.push(row.shard);
        }
      }

      const next = new Set(keep);
      const lost = [...held].filter((shard) => !next.has(shard));
      // A shard of ours that expired and came straight back is lost and gained: its sites resume at its claim.
      for (const { shard } of gained) if (held.has(shard) && !lost.includes(shard)) lost.push(shard);
      held = next;
      return { gained: gained.sort((a, b) => a.shard - b.shard), lost: lost.sort((a, b) => a - b), held: next };
    });
  }

  async function claim(until: Date): Promise<ReadonlySet<number>> {
    if (held.size === 0) return held;
    const rows = await state.run((db) =>
      db
        .update(uptimeShardLeases)
        .set({ claimedUntil: until })
        .where(
          and(
            eq(uptimeShardLeases.holder, workerId),
            gt(uptimeShardLeases.expiresAt, new Date(until.getTime() + clockMarginMs)),
          ),
        )
        .returning({ shard: uptimeShardLeases.shard }),
    );
    return new Set(rows.map((row) => row.shard));
  }

  async function release(): Promise<void> {
    await state.transaction(async (tx) => {
      await tx
        .update(uptimeShardLeases)
        .set({ holder: null, expiresAt: null })
        .where(eq(uptimeShardLeases.holder, workerId));
      await tx.delete(uptimeWorkers).where(eq(uptimeWorkers.id, workerId));
    });
    held = new Set();
  }

  return { workerId, renew, claim, release, held: () => held };
}
