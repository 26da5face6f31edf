// A safe update's row while it runs: the recorder the flow writes through, the report's steps, and
// its end (the row decided, its job's outcome, and the event that says how: `update.verified`,
// `update.rolled-back`, `update.rollback-failed`).
import type { JobContext, Settlement } from '../jobs/job-kind.js';
import { jobEvent } from '../jobs/job-kind.js';
import type { Clock } from '../shared/clock.js';
import type { FlowOutcome, FlowRecorder } from './safe-update-flow.js';
import { safeUpdateJobProgress, safeUpdateOutcome } from './safe-update-job-rows.js';
import type { SafeUpdatesRepository } from './safe-updates.repository.js';
import { storedReport } from './safe-updates.schemas.js';
import type { SafeUpdatePhase, SafeUpdateRow } from './safe-updates.table.js';

/** Phases from which a resumed job goes straight to the after-checks: the site may have changed. */
export const AFTER_UPDATE_PHASES: SafeUpdatePhase[] = ['updating', 'after-check', 'rolling-back', 'restoring-backup'];

/** What `update.verified` says of the look: whether a page changed beyond the threshold, and the largest share changed. */
function visualVerdict(row: SafeUpdateRow): { visualChange: boolean; changedRatio: number | null } {
  const report = storedReport(row);
  const ratios = (report.screenshots ?? []).flatMap((shot) => (shot.changedRatio === null ? [] : [shot.changedRatio]));
  return { visualChange: report.visualChange ?? false, changedRatio: ratios.length > 0 ? Math.max(...ratios) : null };
}

/**
 * What the flow writes through, from the row its run started (`repository.start`): each write lands in the
 * row before the next step starts (crash safety); a new phase is the job's progress, and a new message its
 * note, told to `context`.
 */
export function createRecorder(
  repository: SafeUpdatesRepository,
  started: SafeUpdateRow,
  context: Pick<JobContext, 'progress' | 'note'>,
): FlowRecorder {
  const id = started.id;
  let row = started;
  return {
    row: () => row,
    async phase(phase, changes = {}) {
      const was = row;
      row = (await repository.update(id, { ...changes, phase })) ?? row;
      if (phase !== was.phase) context.progress(safeUpdateJobProgress(phase));
      if (row.message !== was.message) context.note(row.message);
    },
    async report(change) {
      const report = storedReport(row);
      change(report);
      row = (await repository.update(id, { report: JSON.stringify(report) })) ?? row;
    },
  };
}

/** One step of the report, timed from `started` (epoch ms) to now. */
export function addStep(
  record: FlowRecorder,
  step: string,
  ok: boolean,
  started: number,
  detail?: string,
): Promise<void> {
  return record.report((report) => {
    report.steps = [
      ...(report.steps ?? []),
      {
        step,
        ok,
        at: new Date(started).toISOString(),
        durationMs: Date.now() - started,
        ...(detail ? { detail } : {}),
      },
    ];
  });
}

/** Writes the decision (phase `done`) and answers with its job's outcome and the event that announces it. */
export async function finish(
  repository: SafeUpdatesRepository,
  clock: Clock,
  id: string,
  decision: FlowOutcome,
): Promise<Settlement> {
  const row = (await repository.update(id, { ...decision, phase: 'done', finishedAt: clock.now() }))!;
  const outcome = safeUpdateOutcome(row);
  const durationMs = row.startedAt ? row.finishedAt!.getTime() - row.startedAt.getTime() : 0;
  const fields = {
    siteId: row.siteId,
    safeUpdateId: row.id,
    type: row.itemType,
    slug: row.slug,
    fromVersion: row.fromVersion,
    toVersion: row.toVersion,
  };
  if (row.status === 'kept')
    return { outcome, events: [jobEvent('update.verified', { ...fields, ...visualVerdict(row), durationMs })] };
  if (row.status === 'rolled-back')
    return {
      outcome,
      events: [jobEvent('update.rolled-back', { ...fields, reason: row.reason, message: row.message, durationMs })],
    };
  if (row.status === 'rollback-failed')
    return {
      outcome,
      events: [jobEvent('update.rollback-failed', { ...fields, reason: row.reason, message: row.message })],
    };
  return { outcome, events: [] };
}
