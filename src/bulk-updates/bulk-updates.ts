import type { Logger } from 'pino';
import type { StateDatabase } from '../db/state-db.js';
import type { Inventory } from '../inventory/index.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import type { BulkUpdatesConfig } from './bulk-updates.config.js';
import type { JobRowsRead } from './bulk-jobs.js';
import { createBulkUpdatesRepository } from './bulk-updates.repository.js';
import { createBulkUpdatesService } from './bulk-updates.service.js';
import {
  createSiteUpdater,
  type OperateOnSite,
  type InventoryAfterUpdates,
  type UpdateServices,
} from './site-updater.js';
import type { PlainRestorePoints, SafeUpdatesService } from '../safe-updates/index.js';
import { createHistoryRollback, type UpdateHistoryRepository, type UpdateRecorder } from '../update-history/index.js';
import { createUpdateSlots } from './update-slots.js';

/**
 * Builds the bulk updates over the single-site update services (which record their own attempts;
 * a bulk update records its items itself) and the safe updates (a lower tier, given explicitly).
 */
export function createBulkUpdates({
  state,
  history,
  recorder,
  jobs,
  jobRows,
  services,
  operate,
  inventoryAfter,
  safeUpdates,
  restorePoints,
  inventories,
  config,
  clock,
  events,
  logger,
}: {
  state: StateDatabase;
  /** The update history and its recorder, the ones the single-site services record through. */
  history: UpdateHistoryRepository;
  recorder: UpdateRecorder;
  jobs: JobRunner;
  /** Read only (the job runner writes the job rows). */
  jobRows: JobRowsRead;
  services: UpdateServices;
  operate: OperateOnSite;
  inventoryAfter: InventoryAfterUpdates;
  /**
   * Safe items run as safe updates; a safe update that decided ends the bulk item the daemon's stop
   * left following it (bulk-recovery.ts).
   */
  safeUpdates: Pick<SafeUpdatesService, 'safeUpdate' | 'onSettled'>;
  /** The restore point a plain plugin or theme update takes first, and its rollback (safe-updates). */
  restorePoints?: PlainRestorePoints;
  inventories: { read(siteId: string): Promise<Inventory | undefined> };
  config: BulkUpdatesConfig;
  clock: Clock;
  events: Events;
  logger: Logger;
}) {
  const repository = createBulkUpdatesRepository(state);
  const service = createBulkUpdatesService({
    repository,
    history,
    jobRows,
    jobs,
    slots: createUpdateSlots(config),
    updateSite: createSiteUpdater({
      services,
      operate,
      inventoryAfter,
      recorder,
      events,
      // A bulk site update runs inside its own job, which finishes at shutdown, so the safe update is
      // not aborted from here (its own recovery resumes it).
      safeUpdate: (request) => safeUpdates.safeUpdate(request, new AbortController().signal),
      inventories,
      restorePoints,
    }),
    clock,
    events,
    logger,
    refreshInventory: inventoryAfter.sync,
  });
  safeUpdates.onSettled(service.followSafeUpdate);
  const rollback = createHistoryRollback({ history, recorder, restorePoints, events, clock });
  return {
    /** The bulk updates, the update history, and rolling back an entry's plain update (`rollBackEntry`). */
    service: Object.assign(service, {
      rollBackEntry: rollback.rollBack,
      rollbackableEntry: rollback.rollbackable,
    }),
  };
}

export type BulkUpdatesService = ReturnType<typeof createBulkUpdates>['service'];
