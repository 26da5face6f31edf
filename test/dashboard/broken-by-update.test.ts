import { describe, expect, it } from 'vitest';
import type { UpdateHistoryRow } from '../../src/update-history/update-history.table.js';
import type { DashboardServices } from '../../src/dashboard/deps.js';
import { brokenByUpdateNotice } from '../../src/dashboard/update-history.js';

/**
 * The site page's "Roll back" notice: shown when the site's last update broke it (its entry says
 * so, or uptime has the site down since shortly after it), only for an update that can be rolled back.
 */
const T0 = Date.parse('2026-11-27T10:00:00Z');

function entry(changes: Partial<UpdateHistoryRow> = {}): UpdateHistoryRow {
  return {
    id: 'upd_1',
    siteId: 'site_1',
    type: 'plugin',
    slug: 'sitewarden-fatal',
    fromVersion: '1.0.0',
    toVersion: '1.1.0',
    startedAt: new Date(T0),
    finishedAt: new Date(T0 + 5_000),
    triggerKind: 'policy',
    triggerId: 'pol_1',
    jobId: 'bulk_1',
    safeUpdateId: null,
    restorePoint: JSON.stringify({ id: '20261127100000-0123abcd', target: 'plugins/sitewarden-fatal' }),
    rollbackOf: null,
    result: 'succeeded',
    reason: null,
    error: null,
    ...changes,
  };
}

const notice = async (rows: UpdateHistoryRow[], uptime: { status: string; since: string | null }) =>
  String(
    await brokenByUpdateNotice(
      { bulkUpdates: { history: () => Promise.resolve(rows) } as unknown as DashboardServices['bulkUpdates'] },
      'site_1',
      uptime,
    ),
  );
const up = { status: 'up', since: new Date(T0 - 86_400_000).toISOString() };
const downAt = (ms: number) => ({ status: 'down', since: new Date(ms).toISOString() });
const BUTTON = 'href="/sites/site_1/updates/history/upd_1/rollback"';

describe('the site page notice of an update that broke the site', () => {
  it('offers to roll back an update recorded applied with the site unhealthy', async () => {
    const html = await notice([entry({ reason: 'update-applied-site-unhealthy', error: 'site-error: 500' })], up);
    expect(html).toContain('id="broken-by-update"');
    expect(html).toContain('The update of sitewarden-fatal from 1.0.0 to 1.1.0 broke the site');
    expect(html).toContain(BUTTON);
    expect(html).toContain('Roll back sitewarden-fatal to 1.0.0');
  });

  it('offers it when the site went down within the hour after a plain update, and is still down', async () => {
    const html = await notice([entry()], downAt(T0 + 20 * 60_000));
    expect(html).toContain(BUTTON);
    expect(html).toContain('down since 2026-11-27 10:20 UTC');
  });

  it('does not when the site is up, went down before the update or long after it', async () => {
    expect(await notice([entry()], up)).toBe('');
    expect(await notice([entry()], downAt(T0 - 60_000))).toBe('');
    expect(await notice([entry()], downAt(T0 + 3 * 3_600_000))).toBe('');
  });

  it('does not for an update that cannot be rolled back, or already was, or is not the last one', async () => {
    const broken = { reason: 'update-applied-site-unhealthy' };
    expect(await notice([entry({ ...broken, restorePoint: null })], up)).toBe('');
    expect(await notice([entry({ ...broken, result: 'running', finishedAt: null })], up)).toBe('');
    const rollback = entry({ id: 'upd_2', rollbackOf: 'upd_1', restorePoint: null, startedAt: new Date(T0 + 60_000) });
    expect(await notice([rollback, entry(broken)], up)).toBe('');
    const later = entry({ id: 'upd_3', slug: 'other', startedAt: new Date(T0 + 60_000) });
    expect(await notice([later, entry(broken)], up)).toBe('');
  });
});
