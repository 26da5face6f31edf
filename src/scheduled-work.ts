import type { Logger } from 'pino';
import type { ScheduledWorkSwitches } from './config.js';
import type { Scheduler } from './jobs/scheduler.js';
import type { Services } from './services.js';

/**
 * The ticks that start work on the sites without being asked: uptime probes, audits (a newly
 * connected site's first audit among them: a site never audited is due at the next tick) and
 * backups. A switched-off kind gets no tick at all; what the API asks for (POST an audit or a
 * backup) goes straight to the services' queues and works either way, and so do the
 * housekeeping ticks (roll-ups, retention), which main.ts registers on their own.
 */
export function scheduleSiteWork({
  scheduler,
  services,
  switches,
  logger,
}: {
  scheduler: Pick<Scheduler, 'every'>;
  services: {
    uptime: Pick<Services['uptime'], 'tick'>;
    performance: Pick<Services['performance'], 'enqueueDue'>;
    backups: Pick<Services['backups'], 'enqueueDue'>;
    updatePolicies: Pick<Services['updatePolicies'], 'tick'>;
    auditLog: Pick<Services['auditLog'], 'prune'>;
  };
  switches: ScheduledWorkSwitches;
  logger: Logger;
}): void {
  // Uptime: a tick a second queues the probes falling due and writes the last second's results.
  if (switches.uptimeProbes) scheduler.every('uptime-probes', '* * * * * *', () => services.uptime.tick());
  // Audits: a minute tick enqueues the sites whose daily slot came.
  if (switches.audits) scheduler.every('performance-audits', '* * * * *', () => void services.performance.enqueueDue());
  // Backups: a tick every ten minutes queues the sites whose slot in their interval came.
  if (switches.backups) scheduler.every('backups', '*/10 * * * *', () => void services.backups.enqueueDue());
  // Update policies: a minute tick (at second 0, so a window opening at 02:00 starts at 02:00)
  // starts the sites whose window is open. Policies are opt-in, so there is no switch.
  // The promise goes back to the scheduler, which logs a failed tick and skips a minute while one still runs.
  scheduler.every('update-policies', '* * * * *', async () => void (await services.updatePolicies.tick()));
  // The audit log: a daily tick (and one at start) removes entries past SITEWARDEN_AUDIT_RETENTION_DAYS.
  scheduler.every('audit-log-retention', '13 4 * * *', () => void services.auditLog.prune());
  const off = [
    !switches.uptimeProbes && 'uptime probes (SITEWARDEN_SCHEDULED_UPTIME_PROBES=off)',
    !switches.audits && 'audits (SITEWARDEN_SCHEDULED_AUDITS=off)',
    !switches.backups && 'backups (SITEWARDEN_SCHEDULED_BACKUPS=off)',
  ].filter(Boolean);
  if (off.length > 0) logger.info({ scheduledOff: off }, `scheduled work switched off: ${off.join(', ')}`);
}
