import { and, asc, eq, inArray } from 'drizzle-orm';
import { firstRow, rowsChanged, tableFor, writeTogether, writeTogetherReturning } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import { createUpdateHoldsRepository } from './update-holds.repository.js';
import {
  updatePolicies as pgUpdatePolicies,
  updatePolicyRuns as pgUpdatePolicyRuns,
} from './update-policies.pg-table.js';
import { PolicySettingsSchema, type PolicySettings } from './update-policies.schemas.js';
import {
  updatePolicies as sqliteUpdatePolicies,
  updatePolicyRuns as sqliteUpdatePolicyRuns,
  type UpdatePolicyRow,
} from './update-policies.table.js';

export interface StoredPolicy {
  id: string;
  name: string;
  siteId: string | null;
  tag: string | null;
  priority: number;
  settings: PolicySettings;
  createdAt: Date;
  updatedAt: Date;
}

const fromRow = ({ settingsJson, ...row }: UpdatePolicyRow): StoredPolicy => ({
  ...row,
  settings: PolicySettingsSchema.parse(JSON.parse(settingsJson)),
});

/** Sites a statement names at most: within SQLite's limit on bound variables (six a claimed site), with room to spare. */
const SITES_CHUNK = 500;
const chunksOf = <T>(items: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / SITES_CHUNK) }, (_, i) =>
    items.slice(i * SITES_CHUNK, (i + 1) * SITES_CHUNK),
  );

/**
 * The update policies and the windows they started, on either dialect (issue 34,
 * docs/design/cluster-state.md): one async body on drizzle's common query surface, every statement through
 * the state database. What decides a write is the write's own condition: a site or tag gets one policy
 * (`insert`, on the unique indexes), a policy is replaced or removed only while it exists, and a window
 * starts once on a site (`claim`, on the runs' primary key), whichever process ticks.
 */
export function createUpdatePoliciesRepository(state: StateDatabase) {
  const policies = tableFor(state.dialect, { sqlite: sqliteUpdatePolicies, postgres: pgUpdatePolicies });
  const runs = tableFor(state.dialect, { sqlite: sqliteUpdatePolicyRuns, postgres: pgUpdatePolicyRuns });
  const run = state.run.bind(state);

  const windowOf = (policyId: string, windowStart: Date) =>
    and(eq(runs.policyId, policyId), eq(runs.windowStart, windowStart));

  return {
    /** The versions held on sites after a rollback (update_holds). */
    holds: createUpdateHoldsRepository(state),

    /** Every policy, in creation order (ids are time-ordered). */
    list: async (): Promise<StoredPolicy[]> =>
      (await run((db) => db.select().from(policies).orderBy(asc(policies.id)))).map(fromRow),

    find: async (id: string): Promise<StoredPolicy | undefined> => {
      const row = await run((db) => db.select().from(policies).where(eq(policies.id, id)).then(firstRow));
      return row && fromRow(row);
    },

    /** Writes a new policy unless its site or tag has one already (then false): one statement, whoever asks at once. */
    insert: async ({ settings, ...row }: StoredPolicy): Promise<boolean> => {
      const written = await run((db) =>
        db
          .insert(policies)
          .values({ ...row, settingsJson: JSON.stringify(settings) })
          .onConflictDoNothing()
          .returning({ id: policies.id }),
      );
      return written.length > 0;
    },

    /** The policy with these fields now; undefined when there is none (removed meanwhile). */
    replace: async (
      id: string,
      { settings, ...fields }: Pick<StoredPolicy, 'name' | 'priority' | 'settings' | 'updatedAt'>,
    ): Promise<StoredPolicy | undefined> => {
      const row = await run((db) =>
        db
          .update(policies)
          .set({ ...fields, settingsJson: JSON.stringify(settings) })
          .where(eq(policies.id, id))
          .returning()
          .then(firstRow),
      );
      return row && fromRow(row);
    },

    remove: async (id: string): Promise<boolean> =>
      rowsChanged(await run((db) => db.delete(policies).where(eq(policies.id, id)))) > 0,

    /** Whether this window already started a run on this site. */
    hasRun: async (policyId: string, siteId: string, windowStart: Date): Promise<boolean> =>
      (
        await run((db) =>
          db
            .select({ siteId: runs.siteId })
            .from(runs)
            .where(and(windowOf(policyId, windowStart), eq(runs.siteId, siteId)))
            .limit(1),
        )
      ).length > 0,

    /** The sites this window of the policy already started a run on (one query for a whole tick). */
    sitesRun: async (policyId: string, windowStart: Date): Promise<Set<string>> =>
      new Set(
        (await run((db) => db.select({ siteId: runs.siteId }).from(runs).where(windowOf(policyId, windowStart)))).map(
          (row) => row.siteId,
        ),
      ),

    /**
     * Claims the window on these sites before the run starts, so a crash between the two can never
     * start it twice; answers the sites actually claimed (another tick, of this process or another, may
     * have been first). One `insert … on conflict do nothing` a few hundred sites, all claimed or none.
     */
    claim: async (
      policyId: string,
      window: { start: Date; end: Date },
      sites: readonly { siteId: string; targets: number }[],
      startedAt: Date,
    ): Promise<string[]> => {
      if (sites.length === 0) return [];
      const claimed = await writeTogetherReturning(state, (db) =>
        chunksOf(sites).map((chunk) =>
          db
            .insert(runs)
            .values(
              chunk.map(({ siteId, targets }) => ({
                policyId,
                siteId,
                windowStart: window.start,
                windowEnd: window.end,
                startedAt,
                targets,
              })),
            )
            .onConflictDoNothing()
            .returning({ siteId: runs.siteId }),
        ),
      );
      return claimed.map((row) => row.siteId);
    },

    /** A run whose start failed gives the window back (nothing was started). */
    release: (policyId: string, windowStart: Date, siteIds: readonly string[]): Promise<void> =>
      writeTogether(state, (db) =>
        chunksOf(siteIds).map((chunk) =>
          db.delete(runs).where(and(windowOf(policyId, windowStart), inArray(runs.siteId, chunk))),
        ),
      ),

    /** The bulk-update job that carries the window's run on these sites. */
    recordJob: (policyId: string, windowStart: Date, siteIds: readonly string[], jobId: string): Promise<void> =>
      writeTogether(state, (db) =>
        chunksOf(siteIds).map((chunk) =>
          db
            .update(runs)
            .set({ jobId })
            .where(and(windowOf(policyId, windowStart), inArray(runs.siteId, chunk))),
        ),
      ),
  };
}

export type UpdatePoliciesRepository = ReturnType<typeof createUpdatePoliciesRepository>;
