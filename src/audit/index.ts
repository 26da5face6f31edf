// The audit log's door: what the composition (services, app, dashboard, scheduled work) uses.
export { AUDIT_LOG_SETTINGS, type AuditLogConfig } from './audit-log.config.js';
export { createAuditLogRepository } from './audit-log.repository.js';
export { createAuditLogService, type AuditLogService } from './audit-log.service.js';
export { auditOutcomes, type AuditLogRow } from './audit-log.table.js';
export { auditRequests } from './audit.middleware.js';
export { auditFilter, auditLines, createAuditRoutes } from './audit.routes.js';
