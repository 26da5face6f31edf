// One safe update run to a decided state, from its row: fresh (prepare, the last resort's backup,
// the update, the after-checks and the decision) or resumed after a crash past the update (the
// after-checks and the decision). An unexpected failure past the restore point is `rollback-failed`.
import type { Logger } from 'pino';
import type { JobContext, Settlement } from '../jobs/job-kind.js';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import { storedDataProblems } from '../shared/stored-json.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import type { createLastResortSteps } from './last-resort-steps.js';
import type { RollbackPaths } from './rollback-path.js';
import { updateCheckDecide, type FlowDeps, type FlowOutcome } from './safe-update-flow.js';
import { prepare } from './safe-update-prepare.js';
import { addStep, AFTER_UPDATE_PHASES, createRecorder, finish } from './safe-update-record.js';
import type { SafeUpdatesRepository } from './safe-updates.repository.js';
import { storedReport } from './safe-updates.schemas.js';
import { createVisualCheck, type ScreenshotStore } from './visual-check.js';

export function createSafeUpdateRun({
  repository,
  access,
  clock,
  logger,
  flowDeps,
  rollbackPath,
  screenshots,
  lastResort,
}: {
  repository: SafeUpdatesRepository;
  access: SiteAccess;
  clock: Clock;
  logger: Logger;
  flowDeps: FlowDeps;
  rollbackPath: RollbackPaths['rollbackPath'];
  screenshots: ScreenshotStore;
  lastResort: ReturnType<typeof createLastResortSteps>;
}) {
  /**
   * Runs a safe update whose row exists (queued, or left running by a crash), to a decided state,
   * its phase told to `context`.
   */
  return async function execute(
    id: string,
    signal: AbortSignal,
    context: Pick<JobContext, 'progress' | 'note'>,
  ): Promise<Settlement> {
    // Its first start is kept when it resumes; the phase it had says from where.
    const resumed = (await repository.start(id, clock.now()))!;
    const resuming = AFTER_UPDATE_PHASES.includes(resumed.phase);
    const record = createRecorder(repository, resumed, context);
    try {
      let decided: FlowOutcome;
      if (resuming) {
        await addStep(record, 'resumed', true, Date.now(), `from ${resumed.phase}`);
        decided = await access.operate(resumed.siteId, async (site) => {
          const visual = createVisualCheck(screenshots, record, site.site.url);
          return updateCheckDecide(flowDeps, site, await rollbackPath(site), record, null, visual);
        });
      } else {
        const prepared = await access.operate(resumed.siteId, (site) =>
          prepare({ flowDeps, rollbackPath, screenshots }, site, record, signal),
        );
        if ('refused' in prepared) return finish(repository, clock, id, prepared.refused);
        const refused = await lastResort.takeBackup(record);
        if (refused) return finish(repository, clock, id, refused);
        decided = await access.operate(resumed.siteId, async (site) => {
          const row = record.row();
          const item = storedReport(row).item;
          // prepare() wrote it: a report without it is one this version cannot read.
          if (!item)
            throw storedDataProblems.unreadable.create(`the report of safe update ${row.id} does not name its item`);
          const target = item.target;
          const update = async () => {
            if (row.itemType === 'plugin') await site.connector.updatePlugin(target);
            else if (row.itemType === 'theme') await site.connector.updateTheme(target);
            else await site.connector.updateCore(row.toVersion ?? undefined);
          };
          const visual = createVisualCheck(screenshots, record, site.site.url);
          return updateCheckDecide(flowDeps, site, prepared.standalone, record, update, visual);
        });
      }
      return finish(repository, clock, id, await lastResort.restoreBackup(record, decided));
    } catch (error) {
      const reason = isAppError(error) ? error.problem.name : 'internal-error';
      if (!isAppError(error)) logger.error({ err: error, safeUpdateId: id }, 'safe update crashed');
      const row = (await repository.find(id))!;
      // Past the restore point, an unexpected failure leaves the site in doubt: say so loudly.
      const status = AFTER_UPDATE_PHASES.includes(row.phase) ? 'rollback-failed' : 'failed';
      return finish(repository, clock, id, {
        status,
        reason,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  };
}
