import type { JobOutcome } from '../jobs/job-kind.js';
import type { JobRow } from '../jobs/jobs.table.js';
import { updateProblems } from '../inventory/index.js';
import { wordpressUpdatesProblems } from '../wordpress-updates/index.js';
import { bulkUpdatesProblems, notKeptProblem } from './bulk-updates.errors.js';
import type { SafeUpdateFacts } from './bulk-updates.repository.js';
import type { ItemOutcome } from './site-updater.js';
import type { AttemptEnd } from '../update-history/index.js';

/**
 * What a bulk update tells after the daemon stopped in the middle of it (a crash, `kill -9`): a site or
 * item that had not started says so; one under way says what became of it: a safe update goes on after
 * the restart and its item follows it, a plain update may or may not have landed (the inventory is read
 * again). See docs/jobs.md, "Bulk updates".
 */
export const STOPPED_BEFORE_SITE = 'the daemon stopped before this site was updated';
export const STOPPED_BEFORE_ITEM = 'the daemon stopped before this item was updated';
const STOPPED_DURING_SAFE_SITE = 'the daemon stopped during this site’s update; see the safe-update report';
export const STOPPED_DURING_SAFE_ITEM =
  'the daemon stopped during this safe update; it goes on after the restart and this item follows it (see its report)';
export const STOPPED_DURING_PLAIN = 'the daemon stopped during the update; the inventory shows what the site now runs';
export const STOPPED_DURING_RUN =
  'the daemon stopped during this bulk update: sites not started were skipped; each site under way says what became of it';

/** A bulk item as recovery leaves it: one that ran as a safe update names it (`safeUpdateId`), its report. */
export interface StoppedItem extends ItemOutcome {
  safeUpdateId?: string | null;
}

const NOTHING_TO_UPDATE = [updateProblems.noUpdate.name, wordpressUpdatesProblems.versionNotOffered.name];

/** A safe update's decision (queued or running: none yet). */
export const hasDecided = (safeUpdate: Pick<SafeUpdateFacts, 'status'>): boolean =>
  safeUpdate.status !== 'queued' && safeUpdate.status !== 'running';

/** How a decided safe update ends a bulk item's history row: as the bulk item that ran it would have (site-updater). */
export function attemptEndOf(safeUpdate: SafeUpdateFacts): Omit<AttemptEnd, 'finishedAt'> {
  if (safeUpdate.status === 'kept') return { result: 'succeeded', toVersion: safeUpdate.toVersion };
  if (safeUpdate.status === 'rolled-back' || safeUpdate.status === 'rollback-failed') {
    const { problem, message } = notKeptProblem(safeUpdate);
    return { result: 'failed', reason: problem.name, error: message };
  }
  const reason = safeUpdate.reason ?? bulkUpdatesProblems.notUpdatedSafely.name;
  return { result: NOTHING_TO_UPDATE.includes(reason) ? 'skipped' : 'failed', reason, error: safeUpdate.message };
}

/** The bulk item once its safe update decided. */
export function itemAfterSafeUpdate(item: StoppedItem, safeUpdate: SafeUpdateFacts): StoppedItem {
  const end = attemptEndOf(safeUpdate);
  return {
    ...item,
    state: end.result === 'running' ? 'pending' : end.result,
    reason: end.reason ?? null,
    message: end.error ?? null,
    fromVersion: safeUpdate.fromVersion ?? item.fromVersion,
    toVersion: end.toVersion ?? item.toVersion,
    safeUpdateId: safeUpdate.id,
  };
}

const label = (item: StoppedItem) => (item.slug ? `${item.type} ${item.slug}` : item.type);

/** What became of an item that ran as a safe update, in a few words. */
function outcomeWords(item: StoppedItem): string {
  if (item.state === 'succeeded') return 'kept';
  if (item.reason === bulkUpdatesProblems.rolledBack.name) return 'rolled back';
  if (item.reason === bulkUpdatesProblems.rollbackFailed.name) return 'rolled back, and the rollback did not heal it';
  return `not updated${item.reason ? ` (${item.reason})` : ''}`;
}

/**
 * A site's state after the daemon stopped during its update, from its items: nothing started, skipped
 * (`cancelled`, `interrupted`); a safe update still to decide, failed (`interrupted`) until it has; else
 * as its items ended, with a message telling what the stop did.
 */
export function siteAfterStop(
  items: StoppedItem[],
): Pick<JobRow, 'reason' | 'message'> & { state: JobOutcome['state'] } {
  const notStarted = items.filter((item) => item.state === 'skipped' && item.reason === 'interrupted');
  if (notStarted.length === items.length)
    return { state: 'cancelled', reason: 'interrupted', message: STOPPED_BEFORE_SITE };
  if (items.some((item) => item.state === 'pending'))
    return { state: 'failed', reason: 'interrupted', message: STOPPED_DURING_SAFE_SITE };
  const notes: string[] = [];
  if (items.some((item) => item.state === 'failed' && item.reason === 'interrupted')) notes.push(STOPPED_DURING_PLAIN);
  const followed = items.filter((item) => item.safeUpdateId);
  if (followed.length > 0)
    notes.push(
      `the daemon stopped during this site’s update; its safe update finished all the same: ${followed
        .map((item) => `${label(item)} ${outcomeWords(item)}`)
        .join(', ')} (see the safe-update report)`,
    );
  if (notStarted.length > 0) notes.push(`not started: ${notStarted.map(label).join(', ')}`);
  const failed = items.filter((item) => item.state === 'failed');
  return {
    state: failed.length > 0 || notStarted.length > 0 ? 'failed' : 'succeeded',
    reason: failed[0]?.reason ?? (notStarted.length > 0 ? 'interrupted' : null),
    message: notes.length > 0 ? notes.join('; ') : null,
  };
}
