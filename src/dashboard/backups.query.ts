import { isAppError } from '../shared/errors.js';
import type { DashboardServices } from './deps.js';

/**
 * What the Backups page reads before it renders: each offsite target's snapshots, read from the
 * target itself (one that does not answer in time is shown unreachable, with why), the recent
 * verify and repair jobs, and the retention set per tag.
 */

type Backups = DashboardServices['backups'];

/** Verify and repair jobs listed, newest first. */
const CHECKS_LISTED = 20;
/** A target that does not answer in this time is shown unreachable; the page does not wait on it. */
const TARGET_READ_MS = 15_000;

async function readTarget(backups: Backups, name: string) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${TARGET_READ_MS / 1000} s`)), TARGET_READ_MS);
  });
  try {
    return { ok: true as const, ...(await Promise.race([backups.targets.snapshots(name), timeout])) };
  } catch (error) {
    return { ok: false as const, error: isAppError(error) ? error.detail : (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export type TargetState = Awaited<ReturnType<typeof readTarget>>;

export async function loadBackupsPage(backups: Backups) {
  const targets = await Promise.all(
    backups.targets.names.map(async (name) => ({ name, state: await readTarget(backups, name) })),
  );
  return { targets, checks: await backups.recentChecks(CHECKS_LISTED), retention: await backups.retention.view() };
}
