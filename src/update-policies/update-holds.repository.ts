import { and, desc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { firstRow, tableFor } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import type { Actor } from '../shared/actor.js';
import { updateHolds as pgUpdateHolds } from './update-holds.pg-table.js';
import { updateHolds as sqliteUpdateHolds, type UpdateHoldRow } from './update-holds.table.js';

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

/** SQLite's limit on bound variables, with room to spare. */
const SITES_CHUNK = 500;

/**
 * The versions held on sites after a rollback, on either dialect (issue 34, docs/design/cluster-state.md):
 * one async body on drizzle's common query surface, every statement through the state database. A hold is
 * placed once per version by one upsert on the active holds' unique index, and released by one conditional
 * update, so two processes (or two rollback events at once) never hold a version twice or release it twice.
 */
export function createUpdateHoldsRepository(state: StateDatabase) {
  const holds = tableFor(state.dialect, { sqlite: sqliteUpdateHolds, postgres: pgUpdateHolds });
  const run = state.run.bind(state);

  return {
    /**
     * Holds the version, or, when it is held already (rolled back again), brings that hold's date,
     * outcome and reason up to the latest rollback: one statement. Answers the active hold.
     */
    hold: ({ type, ...fields }: NewUpdateHold): Promise<UpdateHold> => {
      const { outcome, reason, message, safeUpdateId, heldAt } = fields;
      return run((db) =>
        db
          .insert(holds)
          .values({ ...fields, itemType: type })
          .onConflictDoUpdate({
            target: [holds.siteId, holds.itemType, holds.slug, holds.version],
            // The active holds' partial index (`update_holds_active_idx`), in its own words.
            targetWhere: sql`released_at is null`,
            set: { outcome, reason, message, safeUpdateId, heldAt },
          })
          .returning()
          .then((rows) => fromRow(rows[0]!)),
      );
    },

    find: async (id: string): Promise<UpdateHold | undefined> => {
      const row = await run((db) => db.select().from(holds).where(eq(holds.id, id)).then(firstRow));
      return row && fromRow(row);
    },

    /** The active holds of these sites, by site (one query per 500 sites). */
    async activeFor(siteIds: readonly string[]): Promise<Map<string, UpdateHold[]>> {
      const bySite = new Map<string, UpdateHold[]>();
      for (let i = 0; i < siteIds.length; i += SITES_CHUNK) {
        const chunk = siteIds.slice(i, i + SITES_CHUNK);
        const rows = await run((db) =>
          db
            .select()
            .from(holds)
            .where(and(inArray(holds.siteId, chunk), isNull(holds.releasedAt))),
        );
        for (const row of rows) bySite.set(row.siteId, [...(bySite.get(row.siteId) ?? []), fromRow(row)]);
      }
      return bySite;
    },

    /** Newest first, `limit + 1` of them (the extra one tells whether a page follows), before the id `before`. */
    async list(filter: {
      siteId?: string;
      state: 'held' | 'released' | 'all';
      limit: number;
      before?: string;
    }): Promise<UpdateHold[]> {
      const state =
        filter.state === 'held'
          ? isNull(holds.releasedAt)
          : filter.state === 'released'
            ? isNotNull(holds.releasedAt)
            : undefined;
      const rows = await run((db) =>
        db
          .select()
          .from(holds)
          .where(
            and(
              state,
              filter.siteId === undefined ? undefined : eq(holds.siteId, filter.siteId),
              filter.before === undefined ? undefined : lt(holds.id, filter.before),
            ),
          )
          .orderBy(desc(holds.id))
          .limit(filter.limit + 1),
      );
      return rows.map(fromRow);
    },

    /** Releases an active hold and answers it as released; undefined when it was released already (or is gone). */
    release: async (id: string, at: Date, by: Actor): Promise<UpdateHold | undefined> => {
      const row = await run((db) =>
        db
          .update(holds)
          .set({ releasedAt: at, releasedByKind: by.kind, releasedById: by.id })
          .where(and(eq(holds.id, id), isNull(holds.releasedAt)))
          .returning()
          .then(firstRow),
      );
      return row && fromRow(row);
    },
  };
}

export type UpdateHoldsRepository = ReturnType<typeof createUpdateHoldsRepository>;
