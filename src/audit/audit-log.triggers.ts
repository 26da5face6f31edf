import { tableTriggers } from '../db/table-triggers.js';

/**
 * The guards that keep `audit_log` (audit-log.table.ts) append-only: no UPDATE, and no DELETE but the
 * retention prune's (rows older than the cutoff it declares in `audit_log_prune_gate` in its own
 * transaction). Not a read model: the source of truth for what the database holds after all
 * migrations (0029 creates them; test/db/table-triggers.test.ts keeps the two equal).
 */
export const auditLogTriggers = tableTriggers({
  table: 'audit_log',
  module: 'audit/',
  what: 'the audit log kept append-only: any UPDATE refused, a DELETE only by the retention prune',
  views: [],
  triggers: [
    {
      name: 'audit_log_no_update',
      on: 'audit_log',
      onModule: 'audit/',
      sql: `CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END`,
    },
    {
      name: 'audit_log_no_delete',
      on: 'audit_log',
      onModule: 'audit/',
      sql: `CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.at >= coalesce((SELECT max(cutoff) FROM audit_log_prune_gate), -1)
BEGIN
  SELECT RAISE(ABORT, 'audit_log rows are removed only by the retention prune');
END`,
    },
  ],
});
