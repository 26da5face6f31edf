import { defineSettings, positiveInt } from '../shared/settings.js';

export interface AuditLogConfig {
  /** SITEWARDEN_AUDIT_RETENTION_DAYS: entries older than this are pruned by a daily tick. */
  retentionDays: number;
}

export const DEFAULT_AUDIT_LOG_CONFIG: AuditLogConfig = { retentionDays: 365 };

/** SITEWARDEN_AUDIT_RETENTION_DAYS, read by src/config.ts. */
export const AUDIT_LOG_SETTINGS = defineSettings({
  SITEWARDEN_AUDIT_RETENTION_DAYS: {
    schema: positiveInt('SITEWARDEN_AUDIT_RETENTION_DAYS', DEFAULT_AUDIT_LOG_CONFIG.retentionDays, 36500),
    default: String(DEFAULT_AUDIT_LOG_CONFIG.retentionDays),
    doc: 'how long audit log entries are kept (`GET /api/audit`, [docs/api.md](api.md#audit-log)); a daily tick removes older ones',
    comment: 'The audit log (GET /api/audit): days its entries are kept; a daily tick removes older ones.',
  },
});
