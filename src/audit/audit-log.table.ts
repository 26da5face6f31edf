import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const auditSources = ['api', 'dashboard'] as const;
export const auditOutcomes = ['ok', 'refused', 'failed'] as const;
export type AuditSource = (typeof auditSources)[number];
export type AuditOutcome = (typeof auditOutcomes)[number];

/**
 * Every state-changing request, refusals included, and every sign-in attempt (issue 33,
 * docs/design/team-access.md): append-only. Migration 0029 adds triggers that refuse any UPDATE,
 * and any DELETE but the retention prune's (rows older than the cutoff it declares in
 * `audit_log_prune_gate` within its own transaction; audit-log.repository.ts). Never a body, a
 * query string, a password or a token: who, from where, which route, which site, what came of it.
 */
export const auditLog = sqliteTable(
  'audit_log',
  {
    /** Time-ordered (`aud_…`): ordering by id is ordering by time. */
    id: text('id').primaryKey(),
    at: integer('at', { mode: 'timestamp_ms' }).notNull(),
    source: text('source', { enum: auditSources }).notNull(),
    /** `token` or `user`; null when the request carried no valid credential (a refused token, a failed sign-in). */
    actorKind: text('actor_kind', { enum: ['token', 'user'] }),
    actorId: text('actor_id'),
    /** The token's or user's name at the time (a failed sign-in: the name tried). */
    actorName: text('actor_name'),
    /** The user behind the request: the signed-in user, or the token's user (null: an operator token). */
    userId: text('user_id'),
    address: text('address').notNull(),
    /** The request's method; null for a sign-in recorded from its event. */
    method: text('method'),
    /** The matched route's pattern (`/api/sites/:siteId/backups`), or `sign-in`. */
    action: text('action').notNull(),
    siteId: text('site_id'),
    targetKind: text('target_kind'),
    targetId: text('target_id'),
    status: integer('status').notNull(),
    outcome: text('outcome', { enum: auditOutcomes }).notNull(),
    /** The problem type (`/problems/forbidden`) when the answer was a problem document. */
    problem: text('problem'),
  },
  (table) => [
    index('audit_log_at_idx').on(table.at),
    index('audit_log_site_idx').on(table.siteId, table.id),
    index('audit_log_actor_idx').on(table.actorId, table.id),
    index('audit_log_user_idx').on(table.userId, table.id),
  ],
);

/**
 * Empty but inside the retention prune's transaction: the cutoff it declares, below which the
 * DELETE trigger on `audit_log` lets rows go.
 */
export const auditLogPruneGate = sqliteTable('audit_log_prune_gate', {
  cutoff: integer('cutoff').notNull(),
});

export type AuditLogRow = typeof auditLog.$inferSelect;
