import { describe, expect, it } from 'vitest';
import { keptBackups, type RetentionPolicy } from '../../src/backups/retention.js';

const none: RetentionPolicy = { keepLast: 1, keepDays: 0, keepDaily: 0, keepWeekly: 0, keepMonthly: 0, keepYearly: 0 };
/** Backups at the given ISO times, newest first, named by their time. */
const at = (...times: string[]) =>
  times
    .map((time) => ({ id: time, createdAt: new Date(time) }))
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
const now = new Date('2026-11-24T12:00:00Z');
const kept = (backups: ReturnType<typeof at>, policy: Partial<RetentionPolicy>) =>
  [...keptBackups(backups, { ...none, ...policy }, now)].sort();

describe('retention (grandfather-father-son)', () => {
  // Two backups a day at 03:00 and 15:00 from 2024-12-01 to 2026-11-24.
  const twiceDaily = at(
    ...Array.from({ length: 724 }, (_, index) => {
      const date = new Date(Date.UTC(2024, 11, 1) + index * 86_400_000).toISOString().slice(0, 10);
      return [`${date}T03:00:00.000Z`, `${date}T15:00:00.000Z`];
    })
      .flat()
      .filter((time) => new Date(time) <= now),
  );

  it('keeps the newest N, and always at least the newest', () => {
    expect(kept(twiceDaily, { keepLast: 3 })).toEqual([
      '2026-11-23T03:00:00.000Z',
      '2026-11-23T15:00:00.000Z',
      '2026-11-24T03:00:00.000Z',
    ]);
    expect(kept(twiceDaily, { keepLast: 0 })).toEqual(['2026-11-24T03:00:00.000Z']);
  });

  it('keeps the newest backup of each of the last days, ISO weeks, months and years that have one', () => {
    expect(kept(twiceDaily, { keepDaily: 3 })).toEqual([
      '2026-11-22T15:00:00.000Z',
      '2026-11-23T15:00:00.000Z',
      '2026-11-24T03:00:00.000Z',
    ]);
    // 2026-11-24 is a Tuesday: this week's newest, then the Sundays ending the two weeks before.
    expect(kept(twiceDaily, { keepWeekly: 3 })).toEqual([
      '2026-11-15T15:00:00.000Z',
      '2026-11-22T15:00:00.000Z',
      '2026-11-24T03:00:00.000Z',
    ]);
    expect(kept(twiceDaily, { keepMonthly: 2, keepYearly: 3 })).toEqual([
      '2024-12-31T15:00:00.000Z',
      '2025-12-31T15:00:00.000Z',
      '2026-10-31T15:00:00.000Z',
      '2026-11-24T03:00:00.000Z',
    ]);
  });

  it('puts the days around new year in the right ISO week', () => {
    // 2026-01-01 is a Thursday: Mon 2025-12-29 … Sun 2026-01-04 are 2026-W01; Sun 2025-12-28 ends 2025-W52.
    const backups = at('2025-12-28T10:00:00Z', '2025-12-29T10:00:00Z', '2026-01-04T10:00:00Z', '2026-01-05T10:00:00Z');
    expect(kept(backups, { keepWeekly: 3 })).toEqual([
      '2025-12-28T10:00:00Z',
      '2026-01-04T10:00:00Z',
      '2026-01-05T10:00:00Z',
    ]);
  });

  it('never deletes a backup younger than the minimum age, and combines the rules', () => {
    const recent = kept(twiceDaily, { keepDays: 2 });
    expect(recent).toHaveLength(4);
    expect(recent[0]).toBe('2026-11-22T15:00:00.000Z');
    expect(kept(twiceDaily, { keepLast: 2, keepDaily: 2, keepYearly: 1 })).toEqual([
      '2026-11-23T15:00:00.000Z',
      '2026-11-24T03:00:00.000Z',
    ]);
  });
});
