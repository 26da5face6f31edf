import type { JobRow } from '../jobs/jobs.table.js';
import { bulkUpdatesProblems } from './bulk-updates.errors.js';
import { stored, type BulkParams, type PreviewProgress } from './bulk-run-view.js';
import type { BulkTarget } from './selection.js';

/**
 * A preview (a dry run) as it is applied: exactly its plan, once. Its row's `progress` says which bulk update it was
 * applied as; a second apply answers `preview-already-applied` naming that run (a form sent twice, two tabs, a retry).
 */
export function previewToApply(
  job: JobRow | undefined,
  id: string,
): { progress: PreviewProgress; targets: BulkTarget[]; checks: NonNullable<BulkParams['checks']> | undefined } {
  if (!job || job.kind !== 'bulk-update') throw bulkUpdatesProblems.notFound.create(`there is no bulk update ${id}`);
  const params = stored.bulkParams(job);
  if (!params.dryRun)
    throw bulkUpdatesProblems.notAPreview.create(`bulk update ${id} is not a preview; preview again to apply it`);
  const progress = stored.previewProgress(job);
  if (progress.appliedAs)
    throw bulkUpdatesProblems.previewAlreadyApplied.create(
      `preview ${id} was already applied as bulk update ${progress.appliedAs}`,
      { runId: progress.appliedAs },
    );
  const targets = progress.plan.flatMap(({ siteId, items }) =>
    items.map((item): BulkTarget => ({
      siteId,
      type: item.type,
      ...(item.slug === null ? {} : { slug: item.slug }),
      ...(item.toVersion === null ? {} : { version: item.toVersion }),
      ...(item.fromVersion === null ? {} : { fromVersion: item.fromVersion }),
    })),
  );
  if (targets.length === 0)
    throw bulkUpdatesProblems.emptySelection.create(`preview ${id} has no update to apply`, { sites: 0 });
  // The checks the preview was asked with, for an apply that names none.
  return { progress, targets, checks: params.checks ?? undefined };
}
