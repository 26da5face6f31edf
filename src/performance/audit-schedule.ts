/**
 * Scheduled audits: the cron tick that queues the audits of every connected site whose slot in its
 * interval has come (the hash spread places each site at its own offset), the slot recorded first and once.
 */
import type { Clock } from '../shared/clock.js';
import { isDue, latestSlot } from '../jobs/spread.js';
import type { AuditSettings } from './audit-settings.js';
import type { PerformanceRepository } from './performance.repository.js';
import type { AuditRow, AuditTrigger, FormFactor } from './performance.table.js';

export function createAuditSchedule({
  repository,
  clock,
  settingsFrom,
  createAudit,
}: {
  repository: PerformanceRepository;
  clock: Clock;
  settingsFrom: AuditSettings['settingsFrom'];
  createAudit: (
    site: { id: string; url: string },
    formFactor: FormFactor,
    runs: number,
    trigger: AuditTrigger,
  ) => Promise<AuditRow>;
}) {
  /** Enqueues the audits of every connected site whose slot has come; returns how many. */
  async function enqueueDue(): Promise<number> {
    const now = clock.now();
    let enqueued = 0;
    for (const site of await repository.connectedSites()) {
      const settings = settingsFrom(site.settings);
      const intervalMs = settings.intervalHours * 3_600_000;
      if (!settings.enabled || !isDue(site.id, intervalMs, site.settings?.lastScheduledAt ?? null, now)) continue;
      // The slot recorded first, once: a tick that finds it taken (another's, meanwhile) queues nothing for it.
      const claimed = await repository.claimSlot({
        siteId: site.id,
        enabled: settings.enabled,
        formFactors: settings.formFactors.join(','),
        runs: settings.runs,
        intervalHours: site.settings?.intervalHours ?? null,
        lastScheduledAt: latestSlot(site.id, intervalMs, now),
      });
      if (!claimed) continue;
      for (const formFactor of settings.formFactors) {
        await createAudit(site, formFactor, settings.runs, 'scheduled');
        enqueued++;
      }
    }
    return enqueued;
  }

  return { enqueueDue };
}
