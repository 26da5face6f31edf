import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { Inventory, Plugin, Theme } from '../inventory/index.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobsRepository } from '../jobs/jobs.repository.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import type { BulkUpdatesConfig } from './bulk-updates.config.js';
import { createBulkUpdatesRepository } from './bulk-updates.repository.js';
import { createBulkUpdatesService } from './bulk-updates.service.js';
import { recordSafeUpdates, recordSingleSiteUpdates } from './recorded-updates.js';
import {
  createSiteUpdater,
  type OperateOnSite,
  type InventoryAfterUpdates,
  type SafeUpdate,
  type UpdateServices,
} from './site-updater.js';
import type { PlainRestorePoints } from '../safe-updates/index.js';
import { createHistoryRollback } from './update-history.rollback.js';
import { createUpdateHistoryRepository } from './update-history.repository.js';
import { createUpdateRecorder } from './update-recorder.js';
import { createUpdateSlots } from './update-slots.js';

/**
 * Builds the bulk updates over the single-site update services, and those services again with
 * every attempt recorded in the update history, for the single-site routes (and the history's
 * hooks for single-site safe updates).
 */
export function createBulkUpdates<
  P extends UpdateServices['plugins'] & { update(siteId: string, slug: string): Promise<Plugin> },
  T extends UpdateServices['themes'] & { update(siteId: string, slug: string): Promise<Theme> },
  W extends UpdateServices['wordpressUpdates'],
>({
  db,
  jobs,
  jobRows,
  services,
  operate,
  inventoryAfter,
  safeUpdate,
  restorePoints,
  inventories,
  config,
  clock,
  events,
  logger,
}: {
  db: Db;
  jobs: JobRunner;
  jobRows: JobsRepository;
  services: { plugins: P; themes: T; wordpressUpdates: W };
  operate: OperateOnSite;
  inventoryAfter: InventoryAfterUpdates;
  safeUpdate: SafeUpdate;
  /** The restore point a plain plugin or theme update takes first, and its rollback (safe-updates). */
  restorePoints?: PlainRestorePoints;
  inventories: { read(siteId: string): Inventory | undefined };
  config: BulkUpdatesConfig;
  clock: Clock;
  events: Events;
  logger: Logger;
}) {
  const repository = createBulkUpdatesRepository({ db });
  const history = createUpdateHistoryRepository({ db });
  const recorder = createUpdateRecorder({ repository: history, clock });
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
      safeUpdate,
      inventories,
      restorePoints,
    }),
    clock,
    events,
    logger,
    refreshInventory: inventoryAfter.sync,
  });
  const rollback = createHistoryRollback({ history, recorder, restorePoints, events, clock });
  return {
    /** The bulk updates, the update history, and rolling back an entry's plain update (`rollBackEntry`). */
    service: Object.assign(service, {
      rollBackEntry: rollback.rollBack,
      rollbackableEntry: rollback.rollbackable,
    }),
    recorded: recordSingleSiteUpdates(services, { recorder, inventories, repository, restorePoints, inventoryAfter }),
    /** For the safe-updates service: the history rows of safe updates asked for through the API. */
    safeUpdateHistory: followedByBulkItems(
      recordSafeUpdates({ recorder, history, inventories, repository, clock }),
      service.followSafeUpdate,
    ),
  };
}

export type BulkUpdatesService = ReturnType<typeof createBulkUpdates>['service'];

/** A safe update that decided also ends the bulk item the daemon's stop left following it (bulk-recovery.ts). */
function followedByBulkItems<H extends { settled(report: R): void }, R>(history: H, follow: (report: R) => void): H {
  return {
    ...history,
    settled(report: R) {
      history.settled(report);
      follow(report);
    },
  };
}
