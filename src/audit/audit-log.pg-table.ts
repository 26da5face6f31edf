import { index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs } from '../db/pg-columns.js';
import { auditOutcomes, auditSources } from './audit-log.table.js';

/**
 * The audit log's table of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types and indexes as audit-log.table.ts, the SQLite table, whose comments say what each
 * column holds. Append-only here too: drizzle-pg's `audit_log_append_only` migration adds a trigger that
 * refuses any UPDATE, and any DELETE but the retention prune's, which declares its cutoff in the
 * transaction-local setting `sitewarden.audit_prune` (no gate table: audit-log.repository.ts).
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    at: timestampMs('at').notNull(),
    source: text('source', { enum: auditSources }).notNull(),
    actorKind: text('actor_kind', { enum: ['token', 'user'] }),
    actorId: text('actor_id'),
    actorName: text('actor_name'),
    userId: text('user_id'),
    address: text('address').notNull(),
    method: text('method'),
    action: text('action').notNull(),
    siteId: text('site_id'),
    targetKind: text('target_kind'),
    targetId: text('target_id'),
    status: integer('status').notNull(),
    outcome: text('outcome', { enum: auditOutcomes }).notNull(),
    problem: text('problem'),
  },
  (table) => [
    index('audit_log_at_idx').on(table.at),
    index('audit_log_site_idx').on(table.siteId, table.id),
    index('audit_log_actor_idx').on(table.actorId, table.id),
    index('audit_log_user_idx').on(table.userId, table.id),
  ],
);
