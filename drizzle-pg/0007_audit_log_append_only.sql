-- The audit log is append-only (issue 33; issue 34, docs/design/cluster-state.md "Triggers on PostgreSQL"),
-- as SQLite's audit_log_no_update and audit_log_no_delete triggers keep it (src/audit/audit-log.triggers.ts):
-- any UPDATE is refused, and any DELETE but the retention prune's, which declares its cutoff (an ISO
-- timestamp) in the setting `sitewarden.audit_prune` local to its own transaction
-- (src/audit/audit-log.repository.ts): only rows older than that cutoff go.
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'audit_log is append-only';
  END IF;
  IF OLD.at < nullif(current_setting('sitewarden.audit_prune', true), '')::timestamptz THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_log rows are removed only by the retention prune';
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
