import type { Logger } from 'pino';
import type { ScheduledWorkSwitches } from './config.js';
import type { Scheduler } from './jobs/scheduler.js';
import type { Services } from './services.js';

/** Who runs a site-work tick: a worker of that kind, or (`api`) the process serving the API's data. */
export type SiteWorkOwner = 'uptime' | 'audits' | 'backups' | 'updates' | 'api';

export interface SiteWorkTick {
  name: string;
  expression: string;
  run: () => void | Promise<void>;
  owner: SiteWorkOwner;
  /** In a cluster, runs in every process of its owner, unclaimed (see Scheduler.every). */
  everyProcess?: boolean;
}

type SiteWorkServices = {
  uptime: Pick<Services['uptime'], 'tick'>;
  performance: Pick<Services['performance'], 'enqueueDue'>;
  backups: Pick<Services['backups'], 'enqueueDue'>;
  updatePolicies: Pick<Services['updatePolicies'], 'tick'>;
  auditLog: Pick<Services['auditLog'], 'prune'>;
};

/**
 * The ticks that start work on the sites without being asked: uptime probes, audits (a newly
 * connected site's first audit among them: a site never audited is due at the next tick) and
 * backups. A switched-off kind gets no tick at all; what the API asks for (POST an audit or a
 * backup) goes straight to the services' queues and works either way, and so do the
 * housekeeping ticks (roll-ups, retention), which each feature's row of src/work-registry.ts registers.
 * Each tick names its owner, so a process role (src/work-registry.ts) starts only its own.
 */
export function siteWorkTicks({
  services,
  switches,
}: {
  services: SiteWorkServices;
  switches: ScheduledWorkSwitches;
}): SiteWorkTick[] {
  const ticks: SiteWorkTick[] = [];
  // Uptime: a tick a second queues the probes falling due and writes the last second's results. In a cluster
  // every uptime worker ticks: each probes the sites of its own shards.
  if (switches.uptimeProbes)
    ticks.push({
      name: 'uptime-probes',
      expression: '* * * * * *',
      run: () => services.uptime.tick(),
      owner: 'uptime',
      everyProcess: true,
    });
  // Audits: a minute tick enqueues the sites whose daily slot came.
  if (switches.audits)
    ticks.push({
      name: 'performance-audits',
      expression: '* * * * *',
      run: async () => void (await services.performance.enqueueDue()),
      owner: 'audits',
    });
  // Backups: a tick every ten minutes queues the sites whose slot in their interval came.
  if (switches.backups)
    ticks.push({
      name: 'backups',
      expression: '*/10 * * * *',
      run: async () => void (await services.backups.enqueueDue()),
      owner: 'backups',
    });
  // Update policies: a minute tick (at second 0, so a window opening at 02:00 starts at 02:00)
  // starts the sites whose window is open. Policies are opt-in, so there is no switch.
  // The promise goes back to the scheduler, which logs a failed tick and skips a minute while one still runs.
  ticks.push({
    name: 'update-policies',
    expression: '* * * * *',
    run: async () => void (await services.updatePolicies.tick()),
    owner: 'updates',
  });
  // The audit log: a daily tick (and one at start) removes entries past SITEWARDEN_AUDIT_RETENTION_DAYS.
  ticks.push({
    name: 'audit-log-retention',
    expression: '13 4 * * *',
    run: async () => void (await services.auditLog.prune()),
    owner: 'api',
  });
  return ticks;
}

/** Logs which kinds of scheduled work the SITEWARDEN_SCHEDULED_* switches turned off, if any. */
export function logScheduledWorkOff(switches: ScheduledWorkSwitches, logger: Logger): void {
  const off = [
    !switches.uptimeProbes && 'uptime probes (SITEWARDEN_SCHEDULED_UPTIME_PROBES=off)',
    !switches.audits && 'audits (SITEWARDEN_SCHEDULED_AUDITS=off)',
    !switches.backups && 'backups (SITEWARDEN_SCHEDULED_BACKUPS=off)',
  ].filter(Boolean);
  if (off.length > 0) logger.info({ scheduledOff: off }, `scheduled work switched off: ${off.join(', ')}`);
}

/** Every site-work tick on one scheduler, whatever its owner (the `all` role's share; tests use it). */
export function scheduleSiteWork({
  scheduler,
  services,
  switches,
  logger,
}: {
  scheduler: Pick<Scheduler, 'every'>;
  services: SiteWorkServices;
  switches: ScheduledWorkSwitches;
  logger: Logger;
}): void {
  for (const tick of siteWorkTicks({ services, switches })) scheduler.every(tick.name, tick.expression, tick.run);
  logScheduledWorkOff(switches, logger);
}
