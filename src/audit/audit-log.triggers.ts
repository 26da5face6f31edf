import { tableTriggers } from '../db/table-triggers.js';

/**
 * The guards that keep `audit_log` (audit-log.table.ts) append-only: no UPDATE, and no DELETE but the
 * retention prune's (rows older than the cutoff it declares in `audit_log_prune_gate` in its own
 * transaction). Not a read model: the source of truth for what the database holds after all
 * migrations (0029 creates them; test/db/table-triggers.test.ts keeps the two equal), and on PostgreSQL
 * (drizzle-pg/0007; test/db/table-triggers.integration.test.ts).
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
  // drizzle-pg/0007: one row trigger for both, the prune's cutoff a setting local to its transaction.
  postgres: {
    functions: [
      {
        name: 'audit_log_append_only',
        body: `
BEGIN
  IF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'audit_log is append-only';
  END IF;
  IF OLD.at < nullif(current_setting('sitewarden.audit_prune', true), '')::timestamptz THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_log rows are removed only by the retention prune';
END
`,
      },
    ],
    triggers: [
      {
        name: 'audit_log_append_only',
        on: 'audit_log',
        sql: 'CREATE TRIGGER audit_log_append_only BEFORE DELETE OR UPDATE ON public.audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()',
      },
    ],
  },
});
