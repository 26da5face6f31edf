/**
 * Wall-clock time in a site's time zone without a date library: an IANA zone through Intl,
 * or a fixed offset (WordPress's `gmt_offset` when no `timezone_string` is set, written `UTC+05:30`).
 */
export interface TimeZone {
  /** The canonical spelling: an IANA name (`Europe/Berlin`) or `UTC±HH:MM`. */
  readonly name: string;
  /** Minutes east of UTC at that instant (ms since the epoch). */
  offsetMinutesAt(instant: number): number;
}

const OFFSET = /^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i;
const MINUTE = 60_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat | null {
  let formatter = formatters.get(zone);
  if (formatter) return formatter;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return null;
  }
  if (formatters.size < 1000) formatters.set(zone, formatter);
  return formatter;
}

/** Formats a fixed offset in minutes as `UTC`, `UTC+05:30`, `UTC-03:00`. */
function offsetName(minutes: number): string {
  if (minutes === 0) return 'UTC';
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

function fixedZone(minutes: number): TimeZone {
  return { name: offsetName(minutes), offsetMinutesAt: () => minutes };
}

/** An IANA zone name or a fixed offset (`UTC+5:30`, `+05:30`, `UTC`); null when it is neither. */
export function parseTimeZone(value: string): TimeZone | null {
  const text = value.trim();
  if (text === '' || text.length > 64) return null;
  if (/^(UTC|GMT|Etc\/UTC|Z)$/i.test(text)) return fixedZone(0);
  const offset = OFFSET.exec(text);
  if (offset) {
    const hours = Number(offset[2]);
    const minutes = Number(offset[3] ?? 0);
    if (hours > 14 || minutes > 59) return null;
    return fixedZone((offset[1] === '-' ? -1 : 1) * (hours * 60 + minutes));
  }
  // Only names, never Intl's own offset spellings: what is stored must be a zone WordPress knows.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(text)) return null;
  const formatter = formatterFor(text);
  if (!formatter) return null;
  const name = formatter.resolvedOptions().timeZone;
  return {
    name,
    offsetMinutesAt(instant) {
      const parts: Record<string, number> = {};
      for (const part of formatter.formatToParts(new Date(instant))) parts[part.type] = Number(part.value);
      const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
      return Math.round((wall - Math.floor(instant / 1000) * 1000) / MINUTE);
    },
  };
}

/** WordPress's settings: `timezone_string` when set (a city), else `gmt_offset` in hours (may be fractional). */
export function timeZoneFromWordPress(timezoneString: string | null, gmtOffset: number | null): string | null {
  if (timezoneString) {
    const zone = parseTimeZone(timezoneString);
    if (zone) return zone.name;
  }
  if (gmtOffset === null || !Number.isFinite(gmtOffset) || Math.abs(gmtOffset) > 14) return null;
  return offsetName(Math.round(gmtOffset * 60));
}

export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

/** The local calendar date at an instant, and its weekday (0 = Sunday). */
export function localDateAt(zone: TimeZone, instant: number): LocalDate & { weekday: number } {
  const wall = new Date(instant + zone.offsetMinutesAt(instant) * MINUTE);
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth() + 1,
    day: wall.getUTCDate(),
    weekday: wall.getUTCDay(),
  };
}

/** The date `days` after `date`, with its weekday. */
export function addDays(date: LocalDate, days: number): LocalDate & { weekday: number } {
  const shifted = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth() + 1,
    day: shifted.getUTCDate(),
    weekday: shifted.getUTCDay(),
  };
}

/**
 * The instant a local wall-clock time happens. Like Temporal's `compatible`: a time that occurs
 * twice (clocks going back) is its first occurrence; a time that does not exist (clocks going
 * forward) is moved forward by the gap, so 02:30 on a spring-forward night is 03:30.
 */
export function instantOf(zone: TimeZone, date: LocalDate, minuteOfDay: number): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day) + minuteOfDay * MINUTE;
  const before = zone.offsetMinutesAt(wall - 36 * 60 * MINUTE);
  const after = zone.offsetMinutesAt(wall + 36 * 60 * MINUTE);
  const matches = (offset: number) => {
    const instant = wall - offset * MINUTE;
    return zone.offsetMinutesAt(instant) === offset ? instant : null;
  };
  const early = matches(before);
  const late = matches(after);
  if (early !== null && late !== null) return Math.min(early, late);
  if (early !== null) return early;
  if (late !== null) return late;
  // In the gap: the earlier offset lands past it by exactly the gap's length.
  return wall - before * MINUTE;
}
