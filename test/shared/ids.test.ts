import { describe, expect, it } from 'vitest';
import { createId } from '../../src/shared/ids.js';

describe('ids', () => {
  it('sort in the order they were made, within one millisecond too', () => {
    const now = new Date('2026-11-24T12:00:00Z');
    const ids = Array.from({ length: 2_000 }, () => createId('site', now));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const later = createId('site', new Date(now.getTime() + 1));
    expect(later > ids.at(-1)!).toBe(true);
    expect(later).toMatch(/^site_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it('sort in the order they were made within a millisecond when ids of other instants come between them', () => {
    const now = new Date('2026-11-29T12:00:00Z');
    const earlier = new Date(now.getTime() - 5);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      createId('evt', earlier);
      ids.push(createId('whd', now));
    }
    expect([...ids].sort()).toEqual(ids);
  });
});
