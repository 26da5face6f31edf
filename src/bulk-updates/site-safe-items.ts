/**
 * A bulk site update's safe items: each plugin, theme or core update run as a safe update (checks,
 * restore point, update, checks, rollback when the site broke; its own job holds the site for each
 * step) and ended as its report decided, with its history row linked to the report.
 */
import { isAppError } from '../shared/errors.js';
import type { SafeUpdatePolicy } from '../safe-updates/index.js';
import { isNothingToUpdate, messageOf, notKeptProblem, reasonOf } from '../update-history/index.js';
import type { ItemOutcome, SiteRun } from './site-outcomes.js';

/** How a safe update of one item ended (the safe-updates feature's report, as far as a bulk update needs it). */
interface SafeOutcome {
  id: string;
  status: string;
  reason: string | null;
  message: string | null;
  toVersion: string | null;
  /** A page changed beyond the threshold: on a kept update, a warning. */
  visualChange?: boolean;
  screenshots?: { url: string; changedRatio: number | null }[];
  policy?: { visual: { threshold: number } };
}
/** A safe update that did not update because the site already failed its checks before: skipped, not the update's fault. */
const SITE_DOWN_BEFORE_UPDATE = 'site-down-before-update';
/** Updates one plugin, theme or core safely: checks, restore point, update, checks, rollback when the site broke. */
export type SafeUpdate = (request: {
  siteId: string;
  type: 'plugin' | 'theme' | 'core';
  slug: string;
  version?: string;
  /** How it checks the site and when it rolls back (the bulk update's `checks`); none: its defaults. */
  policy?: Partial<SafeUpdatePolicy>;
}) => Promise<SafeOutcome>;

/** A kept safe update's warning: which pages look different, by how much. */
function lookChanged(report: SafeOutcome): string {
  const threshold = report.policy?.visual.threshold ?? 0;
  const pages = (report.screenshots ?? [])
    .filter((shot) => (shot.changedRatio ?? 0) > threshold)
    .map((shot) => `${shot.url} changed on ${((shot.changedRatio ?? 0) * 100).toFixed(1)} % of its pixels`);
  return `kept, but it looks different (safe update ${report.id}): ${pages.join('; ') || 'a page changed'} (threshold ${(threshold * 100).toFixed(1)} %)`;
}

/**
 * A safe update: kept, the item succeeded (with the warning `visual-change` when a page looks different); the
 * site already down before it (or nothing on offer), skipped; otherwise failed with its decision
 * (`update-rolled-back`, …) or its reason.
 */
export async function applySafely(
  run: SiteRun,
  outcome: ItemOutcome,
  { safeUpdate, checks }: { safeUpdate: SafeUpdate; checks?: Partial<SafeUpdatePolicy> },
): Promise<void> {
  const type = outcome.type as 'plugin' | 'theme' | 'core';
  const started = run.attempt(outcome);
  const request = {
    siteId: run.siteId,
    type,
    slug: type === 'core' ? 'wordpress' : outcome.slug!,
    ...(outcome.toVersion ? { version: outcome.toVersion } : {}),
    ...(checks ? { policy: checks } : {}),
  };
  const notUpdated = (report: SafeOutcome) =>
    report.status === 'failed' &&
    (report.reason === SITE_DOWN_BEFORE_UPDATE || report.reason === 'no-update-available');
  try {
    const report = await run.record.trackEnding(
      started,
      async () => {
        const report = await safeUpdate(request);
        if (report.status === 'kept' || notUpdated(report)) return report;
        const { problem, message } = notKeptProblem(report);
        throw problem.create(message, { safeUpdateId: report.id });
      },
      (report) =>
        report.status === 'kept'
          ? {
              result: 'succeeded',
              toVersion: report.toVersion ?? started.toVersion,
              safeUpdateId: report.id,
              // Kept, but it looks different: a warning on its succeeded row.
              ...(report.visualChange ? { reason: 'visual-change', error: lookChanged(report) } : {}),
            }
          : { result: 'skipped', reason: report.reason, error: report.message, safeUpdateId: report.id },
    );
    if (report.status === 'kept')
      run.settle(outcome, {
        state: 'succeeded',
        toVersion: report.toVersion ?? outcome.toVersion,
        safeUpdateId: report.id,
        ...(report.visualChange ? { reason: 'visual-change', message: lookChanged(report) } : {}),
      });
    else
      run.settle(outcome, {
        state: 'skipped',
        reason: report.reason,
        message: report.message,
        safeUpdateId: report.id,
      });
  } catch (error) {
    const state = isNothingToUpdate(error) ? 'skipped' : 'failed';
    const safeUpdateId = isAppError(error) ? error.extensions.safeUpdateId : undefined;
    run.settle(outcome, {
      state,
      reason: reasonOf(error),
      message: messageOf(error),
      ...(typeof safeUpdateId === 'string' ? { safeUpdateId } : {}),
    });
  }
}
