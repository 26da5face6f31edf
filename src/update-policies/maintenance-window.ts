import { addDays, instantOf, localDateAt, type TimeZone } from '../shared/time-zone.js';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
type Weekday = (typeof WEEKDAYS)[number];

/**
 * Days and hours in the site's time zone. `days` are the days a window *opens*; an `end` at or
 * before `start` crosses midnight and closes the next day (`22:00`–`04:00`), and `end` equal to
 * `start` is a whole day.
 */
export interface MaintenanceWindow {
  days: readonly Weekday[];
  start: string;
  end: string;
}

export interface WindowSpan {
  start: Date;
  end: Date;
}

const minuteOfDay = (time: string): number => {
  const [hours, minutes] = time.split(':').map(Number);
  return hours! * 60 + minutes!;
};

/**
 * The window open at `now` (if any) and the next one to open after `now`. Windows are computed
 * from the local calendar, so a DST change moves them with the wall clock: a window that opens at
 * a time skipped by the change opens when the clocks resume (02:30 → 03:30).
 */
export function windowsAt(
  window: MaintenanceWindow,
  zone: TimeZone,
  now: Date,
): { open: WindowSpan | null; next: WindowSpan } {
  const start = minuteOfDay(window.start);
  const end = minuteOfDay(window.end);
  const nowMs = now.getTime();
  const today = localDateAt(zone, nowMs);
  let open: WindowSpan | null = null;
  // A window that opened yesterday may still be open; the next opening is at most a week away.
  for (let offset = -1; offset <= 8; offset++) {
    const date = addDays(today, offset);
    if (!window.days.includes(WEEKDAYS[date.weekday]!)) continue;
    const opensAt = instantOf(zone, date, start);
    const closesAt = end > start ? instantOf(zone, date, end) : instantOf(zone, addDays(date, 1), end);
    if (opensAt <= nowMs && nowMs < closesAt && !open) open = { start: new Date(opensAt), end: new Date(closesAt) };
    if (opensAt > nowMs) return { open, next: { start: new Date(opensAt), end: new Date(closesAt) } };
  }
  // Unreachable with at least one day (validation requires one): a week always holds it.
  throw new Error('a maintenance window needs at least one day');
}
