import { lt } from 'drizzle-orm';
import type { StateDatabase } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import type { TickClaim } from './scheduler.js';
import { scheduledTickClaims } from './tick-claims.pg-table.js';

/** How long a claim is kept: past any tick's period that matters (a minute's), so a late process still finds it. */
const KEPT_MS = 24 * 60 * 60_000;
/** How often a process prunes the claims older than that. */
const PRUNE_EVERY_MS = 60 * 60_000;

/**
 * Cron with one leader per tick in a cluster (issue 34, docs/cluster.md): each process runs the ticks of the
 * features its role runs, and every tick fires in each of them. A tick's run claims its minute first (one
 * `insert … on conflict do nothing`): the process whose row is written runs it, the others pass, so the
 * backups due, the policies' runs and the hourly maintenance are started once however many processes look,
 * and any of them starts it when the others are gone.
 */
export function createTickClaims({
  state,
  processId,
  clock,
}: {
  state: StateDatabase;
  /** This process, unique in the cluster (logged on each claim's row). */
  processId: string;
  clock: Clock;
}): TickClaim {
  if (state.dialect !== 'postgres') throw new Error('scheduled tick claims are for cluster mode (PostgreSQL)');
  let prunedAt = 0;
  return async (name, firedAt) => {
    const slot = new Date(Math.floor(firedAt.getTime() / 60_000) * 60_000);
    const now = clock.now();
    if (now.getTime() - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = now.getTime();
      await state.run((db) =>
        db.delete(scheduledTickClaims).where(lt(scheduledTickClaims.slot, new Date(now.getTime() - KEPT_MS))),
      );
    }
    const claimed = await state.run((db) =>
      db
        .insert(scheduledTickClaims)
        .values({ name, slot, claimedBy: processId, claimedAt: now })
        .onConflictDoNothing()
        .returning({ name: scheduledTickClaims.name }),
    );
    return claimed.length > 0;
  };
}
