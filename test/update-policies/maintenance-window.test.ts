import { describe, expect, it } from 'vitest';
import { windowsAt, type MaintenanceWindow } from '../../src/update-policies/maintenance-window.js';
import { parseTimeZone, timeZoneFromWordPress } from '../../src/shared/time-zone.js';

/** Maintenance windows are days and hours on the site's wall clock, whatever its time zone does. */
const zone = (name: string) => {
  const parsed = parseTimeZone(name);
  if (!parsed) throw new Error(`test zone ${name}`);
  return parsed;
};
const at = (iso: string) => new Date(iso);
const iso = (span: { start: Date; end: Date } | null) =>
  span && { start: span.start.toISOString(), end: span.end.toISOString() };

describe('time zones', () => {
  it('takes IANA names and fixed offsets, and refuses anything else', () => {
    expect(parseTimeZone('Europe/Berlin')?.name).toBe('Europe/Berlin');
    expect(parseTimeZone('UTC+5:30')?.name).toBe('UTC+05:30');
    expect(parseTimeZone('-03:00')?.name).toBe('UTC-03:00');
    expect(parseTimeZone('UTC')?.name).toBe('UTC');
    for (const bad of ['Mars/Olympus', 'UTC+15', '', 'Europe/Berlin; drop', '../etc'])
      expect(parseTimeZone(bad)).toBeNull();
  });

  it("reads WordPress's settings: the city when set, else gmt_offset (fractional hours)", () => {
    expect(timeZoneFromWordPress('America/New_York', -5)).toBe('America/New_York');
    expect(timeZoneFromWordPress('', 5.5)).toBe('UTC+05:30');
    expect(timeZoneFromWordPress(null, -9.75)).toBe('UTC-09:45');
    expect(timeZoneFromWordPress('', 0)).toBe('UTC');
    expect(timeZoneFromWordPress(null, null)).toBeNull();
  });
});

describe('windows', () => {
  const nightly: MaintenanceWindow = {
    days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
    start: '02:00',
    end: '04:00',
  };

  it('opens and closes on the local clock (Berlin in winter is UTC+1)', () => {
    const berlin = zone('Europe/Berlin');
    // 00:59 UTC = 01:59 local: closed, opens in a minute.
    const before = windowsAt(nightly, berlin, at('2026-01-14T00:59:00Z'));
    expect(before.open).toBeNull();
    expect(iso(before.next)).toEqual({ start: '2026-01-14T01:00:00.000Z', end: '2026-01-14T03:00:00.000Z' });
    // Exactly at 02:00 local it is open; the next one is tomorrow's.
    const opening = windowsAt(nightly, berlin, at('2026-01-14T01:00:00Z'));
    expect(iso(opening.open)).toEqual({ start: '2026-01-14T01:00:00.000Z', end: '2026-01-14T03:00:00.000Z' });
    expect(opening.next.start.toISOString()).toBe('2026-01-15T01:00:00.000Z');
    // At 04:00 local it has closed: the end is exclusive.
    expect(windowsAt(nightly, berlin, at('2026-01-14T03:00:00Z')).open).toBeNull();
    expect(windowsAt(nightly, berlin, at('2026-01-14T02:59:59.999Z')).open).not.toBeNull();
  });

  it('honours the days, on the local calendar (Tokyo is already Tuesday)', () => {
    const tuesdays: MaintenanceWindow = { days: ['tue'], start: '03:00', end: '05:00' };
    // Monday 2026-01-12 19:00 UTC is Tuesday 04:00 in Tokyo (UTC+9).
    const tokyo = windowsAt(tuesdays, zone('Asia/Tokyo'), at('2026-01-12T19:00:00Z'));
    expect(iso(tokyo.open)).toEqual({ start: '2026-01-12T18:00:00.000Z', end: '2026-01-12T20:00:00.000Z' });
    // The same instant in UTC is a Monday: closed, next Tuesday 03:00 UTC.
    const utc = windowsAt(tuesdays, zone('UTC'), at('2026-01-12T19:00:00Z'));
    expect(utc.open).toBeNull();
    expect(utc.next.start.toISOString()).toBe('2026-01-13T03:00:00.000Z');
    // A week ahead at most: just after Tuesday's window, the next is the Tuesday after.
    expect(windowsAt(tuesdays, zone('UTC'), at('2026-01-13T05:00:00Z')).next.start.toISOString()).toBe(
      '2026-01-20T03:00:00.000Z',
    );
  });

  it('crosses midnight when the end is before the start, and belongs to the day it opens', () => {
    const fridayNight: MaintenanceWindow = { days: ['fri'], start: '22:00', end: '03:00' };
    const ny = zone('America/New_York'); // UTC-5 in January
    // Saturday 01:30 local (06:30 UTC) is still Friday's window.
    const saturday = windowsAt(fridayNight, ny, at('2026-01-17T06:30:00Z'));
    expect(iso(saturday.open)).toEqual({ start: '2026-01-17T03:00:00.000Z', end: '2026-01-17T08:00:00.000Z' });
    // Saturday 22:30 local: Saturday is not a day it opens.
    expect(windowsAt(fridayNight, ny, at('2026-01-18T03:30:00Z')).open).toBeNull();
    // Equal start and end: a whole day.
    const allDay = windowsAt({ days: ['sun'], start: '00:00', end: '00:00' }, zone('UTC'), at('2026-01-18T23:59:00Z'));
    expect(iso(allDay.open)).toEqual({ start: '2026-01-18T00:00:00.000Z', end: '2026-01-19T00:00:00.000Z' });
  });

  it('follows daylight saving time: same wall-clock hours, a skipped hour opens when the clocks resume', () => {
    const berlin = zone('Europe/Berlin');
    // Summer (UTC+2): 02:00 local is 00:00 UTC.
    expect(windowsAt(nightly, berlin, at('2026-07-01T12:00:00Z')).next.start.toISOString()).toBe(
      '2026-07-02T00:00:00.000Z',
    );
    // 29 March 2026, clocks go 02:00 → 03:00: 02:30 does not exist; the window opens an hour on, at
    // 03:30 CEST (01:30 UTC), and still closes at 04:00 CEST.
    const skipped = windowsAt({ ...nightly, start: '02:30' }, berlin, at('2026-03-28T23:00:00Z'));
    expect(iso(skipped.next)).toEqual({ start: '2026-03-29T01:30:00.000Z', end: '2026-03-29T02:00:00.000Z' });
    // 25 October 2026, clocks go 03:00 → 02:00: 02:30 happens twice, the window opens at the first.
    const repeated = windowsAt({ ...nightly, start: '02:30' }, berlin, at('2026-10-24T23:00:00Z'));
    expect(iso(repeated.next)).toEqual({ start: '2026-10-25T00:30:00.000Z', end: '2026-10-25T03:00:00.000Z' });
    // Southern hemisphere (Sydney, DST ends 5 April 2026): 02:00 local is 15:00 UTC before, 16:00 after.
    const sydney = zone('Australia/Sydney');
    expect(windowsAt(nightly, sydney, at('2026-04-03T12:00:00Z')).next.start.toISOString()).toBe(
      '2026-04-03T15:00:00.000Z',
    );
    expect(windowsAt(nightly, sydney, at('2026-04-06T12:00:00Z')).next.start.toISOString()).toBe(
      '2026-04-06T16:00:00.000Z',
    );
  });

  it('uses fixed offsets as they are (WordPress gmt_offset 5.5)', () => {
    const india = windowsAt(nightly, zone('UTC+05:30'), at('2026-01-14T20:00:00Z'));
    expect(india.open).toBeNull();
    expect(india.next.start.toISOString()).toBe('2026-01-14T20:30:00.000Z');
  });
});
