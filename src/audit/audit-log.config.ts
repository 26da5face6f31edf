export interface AuditLogConfig {
  /** SITEWARDEN_AUDIT_RETENTION_DAYS: entries older than this are pruned by a daily tick. */
  retentionDays: number;
}

export const DEFAULT_AUDIT_LOG_CONFIG: AuditLogConfig = { retentionDays: 365 };
