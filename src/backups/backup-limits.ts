import { backupContractProblems } from './backups.errors.js';

/** How long a backup may take and how many bytes it may receive, derived from what the site declared. */
export interface BackupLimitsConfig {
  /** Time for listing and fixed costs; listing must end within it. */
  deadlineBaseMinutes: number;
  /** The slowest transfer a backup is given time for: each declared byte adds 1/minThroughput seconds. */
  minThroughputKibPerSecond: number;
  /** Bytes received may reach the declared bytes times this (re-reads of files that changed)… */
  budgetFactor: number;
  /** …plus this much (table rows, framing). */
  budgetSlackMb: number;
}

export const DEFAULT_BACKUP_LIMITS: BackupLimitsConfig = {
  deadlineBaseMinutes: 60,
  minThroughputKibPerSecond: 512,
  budgetFactor: 2,
  budgetSlackMb: 512,
};

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A byte allowance: `take` counts received bytes and throws `backup-budget-exceeded` past the limit. */
export interface ByteBudget {
  readonly used: number;
  readonly limit: number;
  take(bytes: number): void;
}

/**
 * One backup's deadline and byte budget. Before the listing is complete only the base applies;
 * `declare(bytes)` then sets deadline = start + base + bytes / minThroughput and budget = bytes ×
 * factor + slack. When the deadline passes, `signal` aborts the backup's site calls.
 */
export function createBackupLimits(config: BackupLimitsConfig, now: () => number = Date.now) {
  const started = now();
  const baseMs = config.deadlineBaseMinutes * 60_000;
  const slack = config.budgetSlackMb * 1024 * 1024;
  const controller = new AbortController();
  let deadlineAt = started + baseMs;
  let timer: NodeJS.Timeout | undefined;
  let used = 0;
  let limit = slack;

  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => (now() >= deadlineAt ? controller.abort() : arm()),
      Math.min(MAX_TIMER_MS, Math.max(0, deadlineAt - now())),
    );
    timer.unref();
  };
  arm();

  const budget: ByteBudget = {
    get used() {
      return used;
    },
    get limit() {
      return limit;
    },
    take(bytes) {
      used += bytes;
      if (used > limit)
        throw backupContractProblems.budgetExceeded.create(
          `the site sent ${used} bytes, more than the ${limit} its listing allows (declared bytes × ${config.budgetFactor} + ${config.budgetSlackMb} MiB)`,
          { bytesReceived: used, budgetBytes: limit },
        );
    },
  };

  return {
    budget,
    signal: controller.signal,
    get expired() {
      return controller.signal.aborted;
    },
    /** The listing is complete: the site declared `bytes` to back up. */
    declare(bytes: number) {
      deadlineAt = started + baseMs + (bytes / (config.minThroughputKibPerSecond * 1024)) * 1000;
      limit = bytes * config.budgetFactor + slack;
      if (now() >= deadlineAt) controller.abort();
      else arm();
    },
    deadlineProblem() {
      const seconds = Math.round((deadlineAt - started) / 1000);
      return backupContractProblems.deadlineExceeded.create(
        `the backup did not finish within its deadline of ${seconds} s (${config.deadlineBaseMinutes} min + declared bytes at ${config.minThroughputKibPerSecond} KiB/s)`,
        { deadlineSeconds: seconds },
      );
    },
    dispose() {
      clearTimeout(timer);
    },
  };
}

export type BackupLimits = ReturnType<typeof createBackupLimits>;
