import { and, desc, eq, inArray, isNotNull, isNull, lt } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { Actor } from '../shared/actor.js';
import { updateHolds, type UpdateHoldRow } from './update-holds.table.js';

/** A held version: what the policies skip on one site, and why. */
export interface UpdateHold {
  id: string;
  siteId: string;
  type: UpdateHoldRow['itemType'];
  slug: string;
  version: string;
  outcome: UpdateHoldRow['outcome'];
  reason: string | null;
  message: string | null;
  safeUpdateId: string | null;
  heldAt: Date;
  releasedAt: Date | null;
  releasedBy: Actor | null;
}

export type NewUpdateHold = Omit<UpdateHold, 'releasedAt' | 'releasedBy'>;

const fromRow = ({ itemType, releasedByKind, releasedById, ...row }: UpdateHoldRow): UpdateHold => ({
  ...row,
  type: itemType,
  releasedBy: releasedByKind && releasedById ? { kind: releasedByKind, id: releasedById } : null,
});

const activeOf = (hold: Pick<UpdateHold, 'siteId' | 'type' | 'slug' | 'version'>) =>
  and(
    eq(updateHolds.siteId, hold.siteId),
    eq(updateHolds.itemType, hold.type),
    eq(updateHolds.slug, hold.slug),
    eq(updateHolds.version, hold.version),
    isNull(updateHolds.releasedAt),
  );

/** SQLite's limit on bound variables, with room to spare. */
const SITES_CHUNK = 500;

export function createUpdateHoldsRepository({ db }: { db: Db }) {
  return {
    /**
     * Holds the version, or, when it is held already (rolled back again), brings that hold's
     * date, outcome and reason up to the latest rollback. Answers the active hold.
     */
    hold(hold: NewUpdateHold): UpdateHold {
      return db.transaction((tx) => {
        const { type, ...fields } = hold;
        const existing = tx.select().from(updateHolds).where(activeOf(hold)).get();
        if (existing) {
          const { id: _id, ...latest } = fields;
          tx.update(updateHolds).set(latest).where(eq(updateHolds.id, existing.id)).run();
        } else
          tx.insert(updateHolds)
            .values({ ...fields, itemType: type })
            .run();
        return fromRow(tx.select().from(updateHolds).where(activeOf(hold)).get()!);
      });
    },

    find(id: string): UpdateHold | undefined {
      const row = db.select().from(updateHolds).where(eq(updateHolds.id, id)).get();
      return row ? fromRow(row) : undefined;
    },

    /** The active holds of these sites, by site (one query per 500 sites). */
    activeFor(siteIds: readonly string[]): Map<string, UpdateHold[]> {
      const bySite = new Map<string, UpdateHold[]>();
      for (let i = 0; i < siteIds.length; i += SITES_CHUNK) {
        const rows = db
          .select()
          .from(updateHolds)
          .where(and(inArray(updateHolds.siteId, siteIds.slice(i, i + SITES_CHUNK)), isNull(updateHolds.releasedAt)))
          .all();
        for (const row of rows) bySite.set(row.siteId, [...(bySite.get(row.siteId) ?? []), fromRow(row)]);
      }
      return bySite;
    },

    /** Newest first, `limit + 1` of them (the extra one tells whether a page follows), before the id `before`. */
    list(filter: {
      siteId?: string;
      state: 'held' | 'released' | 'all';
      limit: number;
      before?: string;
    }): UpdateHold[] {
      const state =
        filter.state === 'held'
          ? isNull(updateHolds.releasedAt)
          : filter.state === 'released'
            ? isNotNull(updateHolds.releasedAt)
            : undefined;
      return db
        .select()
        .from(updateHolds)
        .where(
          and(
            state,
            filter.siteId === undefined ? undefined : eq(updateHolds.siteId, filter.siteId),
            filter.before === undefined ? undefined : lt(updateHolds.id, filter.before),
          ),
        )
        .orderBy(desc(updateHolds.id))
        .limit(filter.limit + 1)
        .all()
        .map(fromRow);
    },

    /** Releases an active hold; false when it was released already. */
    release(id: string, at: Date, by: Actor): boolean {
      return (
        db
          .update(updateHolds)
          .set({ releasedAt: at, releasedByKind: by.kind, releasedById: by.id })
          .where(and(eq(updateHolds.id, id), isNull(updateHolds.releasedAt)))
          .run().changes > 0
      );
    },
  };
}

export type UpdateHoldsRepository = ReturnType<typeof createUpdateHoldsRepository>;
