/**
 * Which backups a retention policy keeps (restic's `forget` rules): the newest `keepLast`, the
 * newest of each of the newest `keepDaily` days that have a backup (likewise ISO weeks, months and
 * years: grandfather-father-son), and every backup younger than `keepDays` days, a minimum age
 * nothing is deleted before. A backup any rule keeps is kept. Calendar periods are UTC.
 */
export interface RetentionPolicy {
  keepLast: number;
  keepDays: number;
  keepDaily: number;
  keepWeekly: number;
  keepMonthly: number;
  keepYearly: number;
}

const RETENTION_COUNTS = ['keepDaily', 'keepWeekly', 'keepMonthly', 'keepYearly'] as const;
export const RETENTION_FIELDS = ['keepLast', 'keepDays', ...RETENTION_COUNTS] as const;

const day = (date: Date) => date.toISOString().slice(0, 10);
const month = (date: Date) => date.toISOString().slice(0, 7);
const year = (date: Date) => date.toISOString().slice(0, 4);
/** ISO 8601 week: the week (Monday first) holding the date's Thursday, labelled by that Thursday's year. */
function week(date: Date): string {
  const thursday = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  thursday.setUTCDate(thursday.getUTCDate() + 3 - ((thursday.getUTCDay() + 6) % 7));
  const firstThursday = new Date(Date.UTC(thursday.getUTCFullYear(), 0, 4));
  const firstThursdayOffset = (firstThursday.getUTCDay() + 6) % 7;
  const days = (thursday.getTime() - firstThursday.getTime()) / 86_400_000;
  const number = 1 + Math.round((days - 3 + firstThursdayOffset) / 7);
  return `${thursday.getUTCFullYear()}-W${String(number).padStart(2, '0')}`;
}

const PERIODS = { keepDaily: day, keepWeekly: week, keepMonthly: month, keepYearly: year } as const;

/** The ids of `backups` (newest first) the policy keeps; the newest is always kept. */
export function keptBackups<T extends { id: string; createdAt: Date }>(
  backups: readonly T[],
  policy: RetentionPolicy,
  now: Date,
): Set<string> {
  const kept = new Set<string>();
  backups.slice(0, Math.max(1, policy.keepLast)).forEach((backup) => kept.add(backup.id));
  const youngest = now.getTime() - policy.keepDays * 86_400_000;
  if (policy.keepDays > 0)
    for (const backup of backups) if (backup.createdAt.getTime() >= youngest) kept.add(backup.id);
  for (const rule of RETENTION_COUNTS) {
    const periodOf = PERIODS[rule];
    let left = policy[rule];
    let last: string | null = null;
    for (const backup of backups) {
      if (left <= 0) break;
      const period = periodOf(backup.createdAt);
      if (period === last) continue;
      last = period;
      kept.add(backup.id);
      left--;
    }
  }
  return kept;
}
