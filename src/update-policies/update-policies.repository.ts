import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { PolicySettingsSchema, type PolicySettings } from './update-policies.schemas.js';
import { updatePolicies, updatePolicyRuns, type UpdatePolicyRow } from './update-policies.table.js';
import { createUpdateHoldsRepository } from './update-holds.repository.js';

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

const runOf = (policyId: string, siteId: string, windowStart: Date) =>
  and(
    eq(updatePolicyRuns.policyId, policyId),
    eq(updatePolicyRuns.siteId, siteId),
    eq(updatePolicyRuns.windowStart, windowStart),
  );

export function createUpdatePoliciesRepository({ db }: { db: Db }) {
  return {
    /** The versions held on sites after a rollback (update_holds). */
    holds: createUpdateHoldsRepository({ db }),

    /** Every policy, in creation order (ids are time-ordered). */
    list: (): StoredPolicy[] => db.select().from(updatePolicies).orderBy(asc(updatePolicies.id)).all().map(fromRow),

    find(id: string): StoredPolicy | undefined {
      const row = db.select().from(updatePolicies).where(eq(updatePolicies.id, id)).get();
      return row ? fromRow(row) : undefined;
    },

    findByScope(scope: { siteId: string } | { tag: string }): StoredPolicy | undefined {
      const condition = 'siteId' in scope ? eq(updatePolicies.siteId, scope.siteId) : eq(updatePolicies.tag, scope.tag);
      const row = db.select().from(updatePolicies).where(condition).get();
      return row ? fromRow(row) : undefined;
    },

    insert(policy: StoredPolicy): void {
      const { settings, ...row } = policy;
      db.insert(updatePolicies)
        .values({ ...row, settingsJson: JSON.stringify(settings) })
        .run();
    },

    replace(id: string, fields: Pick<StoredPolicy, 'name' | 'priority' | 'settings' | 'updatedAt'>): void {
      const { settings, ...row } = fields;
      db.update(updatePolicies)
        .set({ ...row, settingsJson: JSON.stringify(settings) })
        .where(eq(updatePolicies.id, id))
        .run();
    },

    remove: (id: string): boolean => db.delete(updatePolicies).where(eq(updatePolicies.id, id)).run().changes > 0,

    /** Whether this window already started a run on this site. */
    hasRun: (policyId: string, siteId: string, windowStart: Date): boolean =>
      db
        .select({ siteId: updatePolicyRuns.siteId })
        .from(updatePolicyRuns)
        .where(runOf(policyId, siteId, windowStart))
        .get() !== undefined,

    /** The sites this window of the policy already started a run on (one query for a whole tick). */
    sitesRun: (policyId: string, windowStart: Date): Set<string> =>
      new Set(
        db
          .select({ siteId: updatePolicyRuns.siteId })
          .from(updatePolicyRuns)
          .where(and(eq(updatePolicyRuns.policyId, policyId), eq(updatePolicyRuns.windowStart, windowStart)))
          .all()
          .map((row) => row.siteId),
      ),

    /**
     * Claims the window on these sites before the run starts, so a crash between the two can
     * never start it twice; answers the sites actually claimed (another tick may have been first).
     */
    claim(
      policyId: string,
      window: { start: Date; end: Date },
      sites: { siteId: string; targets: number }[],
      startedAt: Date,
    ): string[] {
      return db.transaction((tx) =>
        sites
          .filter(
            ({ siteId, targets }) =>
              tx
                .insert(updatePolicyRuns)
                .values({ policyId, siteId, windowStart: window.start, windowEnd: window.end, startedAt, targets })
                .onConflictDoNothing()
                .run().changes > 0,
          )
          .map(({ siteId }) => siteId),
      );
    },

    /** A run whose start failed gives the window back (nothing was started). */
    release(policyId: string, windowStart: Date, siteIds: readonly string[]): void {
      db.transaction((tx) => {
        for (const siteId of siteIds)
          tx.delete(updatePolicyRuns)
            .where(runOf(policyId, siteId, windowStart))
            .run();
      });
    },

    recordJob(policyId: string, windowStart: Date, siteIds: readonly string[], jobId: string): void {
      db.transaction((tx) => {
        for (const siteId of siteIds)
          tx.update(updatePolicyRuns)
            .set({ jobId })
            .where(runOf(policyId, siteId, windowStart))
            .run();
      });
    },
  };
}

export type UpdatePoliciesRepository = ReturnType<typeof createUpdatePoliciesRepository>;
