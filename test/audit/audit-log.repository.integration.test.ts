import { eq } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as pg from '../../src/audit/audit-log.pg-table.js';
import { createAuditLogRepository, type AuditLogEntry } from '../../src/audit/audit-log.repository.js';
import * as sqlite from '../../src/audit/audit-log.table.js';
import { tableFor } from '../../src/db/dialect.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/** The audit log on both dialects (issue 34, docs/design/cluster-state.md), append-only on both. */
const T0 = Date.parse('2026-03-01T10:00:00Z');
const HOUR = 3_600_000;

const entry = (n: number, fields: Partial<AuditLogEntry> = {}): AuditLogEntry => ({
  id: `aud_${String(n).padStart(4, '0')}`,
  at: new Date(T0 + n * HOUR),
  source: 'api',
  actorKind: 'token',
  actorId: 'tok_a',
  actorName: 'ci',
  userId: null,
  address: '127.0.0.1',
  method: 'POST',
  action: '/api/sites/:siteId/backups',
  siteId: 'site_a',
  targetKind: null,
  targetId: null,
  status: 202,
  outcome: 'ok',
  problem: null,
  ...fields,
});

/** The error's messages and its causes' (drizzle wraps the driver's error of an awaited statement). */
async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    const messages: string[] = [];
    for (let current: unknown = error; current instanceof Error; current = current.cause)
      messages.push(current.message);
    return messages.join(' / ');
  }
  throw new Error('the statement was not refused');
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

describe('the audit log table of the PostgreSQL dialect', () => {
  it('has the SQLite table’s row types', () => {
    expectTypeOf<RowsOf<typeof pg.auditLog>>().toEqualTypeOf<RowsOf<typeof sqlite.auditLog>>();
  });
});

describe.each(dialects)('the audit log repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'audit-log-repository');
  const table = (s: StateDatabase) => tableFor(s.dialect, { sqlite: sqlite.auditLog, postgres: pg.auditLog });

  it('records entries as given and lists them newest first, a page at a time before a cursor', async () => {
    const repository = createAuditLogRepository(state());
    const first = entry(1, { actorKind: null, actorId: null, actorName: 'mallory', status: 401, outcome: 'refused' });
    const second = entry(2, {
      source: 'dashboard',
      actorKind: 'user',
      actorId: 'usr_b',
      userId: 'usr_b',
      method: null,
      action: 'sign-in',
      siteId: null,
      targetKind: 'backup',
      targetId: 'bak_1',
      problem: '/problems/forbidden',
    });
    await repository.insert(first);
    await repository.insert(second);
    await repository.insert(entry(3));
    expect(await repository.list({ limit: 10 })).toEqual([entry(3), second, first]);
    expect(ids(await repository.list({ limit: 2 }))).toEqual(['aud_0003', 'aud_0002']);
    expect(ids(await repository.list({ limit: 2, before: 'aud_0002' }))).toEqual(['aud_0001']);
    // The primary key: an id is recorded once.
    await expect(repository.insert(entry(3))).rejects.toThrow();
  });

  it('filters by site, actor (the token or the user behind it), time and outcome', async () => {
    const repository = createAuditLogRepository(state());
    await repository.insert(entry(1, { siteId: 'site_a' }));
    await repository.insert(entry(2, { siteId: 'site_b', actorId: 'tok_b', userId: 'usr_b' }));
    await repository.insert(entry(3, { siteId: null, actorKind: 'user', actorId: 'usr_b', userId: 'usr_b' }));
    await repository.insert(entry(4, { siteId: 'site_a', status: 500, outcome: 'failed' }));
    const listed = async (filter: Parameters<typeof repository.list>[0]) => ids(await repository.list(filter));
    expect(await listed({ siteId: 'site_a', limit: 10 })).toEqual(['aud_0004', 'aud_0001']);
    expect(await listed({ actorId: 'usr_b', limit: 10 })).toEqual(['aud_0003', 'aud_0002']);
    expect(await listed({ actorId: 'tok_b', limit: 10 })).toEqual(['aud_0002']);
    expect(await listed({ actorId: 'tok_a', limit: 10 })).toEqual(['aud_0004', 'aud_0001']);
    // `since` inclusive, `until` exclusive.
    expect(await listed({ since: new Date(T0 + 2 * HOUR), until: new Date(T0 + 4 * HOUR), limit: 10 })).toEqual([
      'aud_0003',
      'aud_0002',
    ]);
    expect(await listed({ outcome: 'failed', limit: 10 })).toEqual(['aud_0004']);
    expect(await listed({ siteId: 'site_a', outcome: 'ok', limit: 10 })).toEqual(['aud_0001']);
    expect(await listed({ siteId: 'site_none', limit: 10 })).toEqual([]);
  });

  it('lists forward, oldest first, after a cursor, with the same filters', async () => {
    const repository = createAuditLogRepository(state());
    for (let n = 1; n <= 5; n++) await repository.insert(entry(n, { siteId: n === 3 ? 'site_b' : 'site_a' }));
    expect(ids(await repository.listForward({ limit: 2 }))).toEqual(['aud_0001', 'aud_0002']);
    expect(ids(await repository.listForward({ limit: 2, after: 'aud_0002' }))).toEqual(['aud_0003', 'aud_0004']);
    expect(ids(await repository.listForward({ siteId: 'site_a', after: 'aud_0002', limit: 10 }))).toEqual([
      'aud_0004',
      'aud_0005',
    ]);
    expect(await repository.listForward({ limit: 10, after: 'aud_0005' })).toEqual([]);
    expect((await repository.listForward({ limit: 1 }))[0]).toEqual(entry(1, { siteId: 'site_a' }));
  });

  it('is append-only: the database refuses an UPDATE and a DELETE', async () => {
    const s = state();
    const repository = createAuditLogRepository(s);
    const auditLog = table(s);
    await repository.insert(entry(1));
    expect(
      await refusal(s.run((db) => db.update(auditLog).set({ status: 200 }).where(eq(auditLog.id, 'aud_0001')))),
    ).toMatch(/append-only/);
    expect(await refusal(s.run((db) => db.delete(auditLog).where(eq(auditLog.id, 'aud_0001'))))).toMatch(
      /only by the retention prune/,
    );
    expect(await refusal(s.run((db) => db.delete(auditLog)))).toMatch(/only by the retention prune/);
    expect(await repository.list({ limit: 10 })).toEqual([entry(1)]);
  });

  it('prunes only the entries older than its cutoff, and lets no other delete through after it', async () => {
    const s = state();
    const repository = createAuditLogRepository(s);
    const auditLog = table(s);
    for (let n = 1; n <= 4; n++) await repository.insert(entry(n));
    expect(await repository.pruneBefore(new Date(T0))).toBe(0);
    // Strictly older: the entry at the cutoff stays.
    expect(await repository.pruneBefore(new Date(T0 + 3 * HOUR))).toBe(2);
    expect(ids(await repository.listForward({ limit: 10 }))).toEqual(['aud_0003', 'aud_0004']);
    // The prune's declaration ended with it (SQLite's gate row, PostgreSQL's transaction-local setting).
    expect(await refusal(s.run((db) => db.delete(auditLog)))).toMatch(/only by the retention prune/);
    expect(
      await refusal(
        s.run((db) =>
          db
            .update(auditLog)
            .set({ at: new Date(T0) })
            .where(eq(auditLog.id, 'aud_0003')),
        ),
      ),
    ).toMatch(/append-only/);
    expect(await repository.pruneBefore(new Date(T0 + 10 * HOUR))).toBe(2);
    expect(await repository.list({ limit: 10 })).toEqual([]);
  });
});
