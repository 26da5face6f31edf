import { updateProblems } from '../inventory/index.js';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { knownVersions, type Inventories } from './single-site.js';
import { notKeptProblem, updateHistoryProblems } from './update-history.errors.js';
import type { AttemptEnd, UpdateHistoryRepository } from './update-history.repository.js';
import { requester, type UpdateRecorder } from './update-recorder.js';

/** A safe update's report, as far as its history row needs it (the safe-updates feature's view). */
interface SafeUpdateReport {
  id: string;
  siteId: string;
  type: 'plugin' | 'theme' | 'core';
  slug: string;
  status: string;
  reason: string | null;
  message: string | null;
  fromVersion: string | null;
  toVersion: string | null;
  /** A page changed beyond the threshold: on a kept update, a warning (`visual-change` on its succeeded row). */
  visualChange?: boolean;
}

// Skipped, not failed: nothing to update, or the site was already down before the update (not the update's fault).
const NOTHING_TO_UPDATE = [
  updateProblems.noUpdate.name,
  updateProblems.versionNotOffered.name,
  'site-down-before-update',
];

/** How a decided safe update ends its history row: kept is succeeded; rolled back, or not done, failed with why. */
function safeUpdateEnd(report: SafeUpdateReport): Omit<AttemptEnd, 'finishedAt'> {
  switch (report.status) {
    case 'kept':
      return {
        result: 'succeeded',
        toVersion: report.toVersion,
        ...(report.visualChange
          ? { reason: 'visual-change', error: 'kept, but a page looks different beyond the threshold (see its report)' }
          : {}),
      };
    case 'rolled-back':
    case 'rollback-failed': {
      const { problem, message } = notKeptProblem(report);
      return { result: 'failed', reason: problem.name, error: message };
    }
    default: {
      const reason = report.reason ?? updateHistoryProblems.notUpdatedSafely.name;
      return {
        result: NOTHING_TO_UPDATE.includes(reason) ? 'skipped' : 'failed',
        reason,
        error: report.message,
      };
    }
  }
}

/**
 * The update history of safe updates asked for through the API (a bulk update's safe items are
 * recorded by its site updater): a running row when one is queued, on the request's path so it
 * names who asked, linked to the report; finished with the decision when its job ends.
 */
export function createSafeUpdateRecording({
  recorder,
  history,
  inventories,
  sites,
  clock,
}: {
  recorder: UpdateRecorder;
  history: Pick<UpdateHistoryRepository, 'finishSafeUpdate'>;
  inventories: Inventories;
  /** The site, to know it exists (an unknown site has no history) and its WordPress version. */
  sites: { findById(siteId: string): Promise<{ wordpressVersion: string | null } | undefined> };
  clock: Clock;
}) {
  return {
    async started(report: SafeUpdateReport, requestedBy: Actor | undefined): Promise<void> {
      const site = await sites.findById(report.siteId);
      if (!site) return;
      const versions =
        report.type === 'core'
          ? { fromVersion: site.wordpressVersion, toVersion: report.toVersion }
          : await knownVersions(inventories, report.siteId, report.type, report.slug);
      await recorder.start({
        siteId: report.siteId,
        type: report.type,
        slug: report.type === 'core' ? null : report.slug,
        fromVersion: versions.fromVersion ?? null,
        toVersion: report.toVersion ?? versions.toVersion,
        trigger: requester(requestedBy),
        safeUpdateId: report.id,
      });
    },
    async settled(report: SafeUpdateReport): Promise<void> {
      await history.finishSafeUpdate(report.id, {
        ...safeUpdateEnd(report),
        fromVersion: report.fromVersion,
        finishedAt: clock.now(),
      });
    },
  };
}
