import type { Events } from '../shared/event-bus.js';
import { applyProbe, type SiteMonitor } from './monitor-state.js';
import type { createProbeWriter } from './probe-writer.js';
import type { ProbeOutcome } from './prober.js';
import { DAY_MS, type HourlyRollups } from './rollups.js';
import type { UptimeConfig } from './uptime.config.js';
import type { ProbeRow, UptimeRepository } from './uptime.repository.js';
import type { UptimeScheduler } from './uptime-scheduler.js';

/**
 * What one probe's outcome does: the raw probe goes to the writer's buffer, the open hour's
 * roll-up and the monitor's recent probes; the state machine decides whether the site went down
 * or came back up (written at once, then `site.down` or `site.up` emitted) and whether to probe
 * again soon; a certificate's expiry is stored when it changes and warned about once per
 * certificate when it is near.
 */

/** How many of its latest probes a monitor keeps in memory. */
export const RECENT_PROBES = 10;

export function createProbeRecorder({
  repository,
  writer,
  rollups,
  scheduler,
  events,
  config,
  metrics,
  now,
}: {
  repository: UptimeRepository;
  writer: ReturnType<typeof createProbeWriter>;
  rollups: Pick<HourlyRollups, 'add'>;
  scheduler: Pick<UptimeScheduler, 'recheck'>;
  events: Events;
  config: UptimeConfig;
  metrics?: { observeProbe(outcome: 'up' | 'down', responseMs: number | null): void };
  now: () => number;
}) {
  /** The monitor's memory changes at once, before anything is awaited; the writes it makes are awaited in order. */
  async function record(monitor: SiteMonitor, at: number, outcome: ProbeOutcome): Promise<void> {
    const row: ProbeRow = { siteId: monitor.siteId, at, ...outcome };
    writer.add(row);
    metrics?.observeProbe(outcome.up ? 'up' : 'down', outcome.responseMs);
    rollups.add(monitor.siteId, at, outcome.up, outcome.responseMs);
    monitor.recent.push(row);
    if (monitor.recent.length > RECENT_PROBES) monitor.recent.shift();

    const { state, transition, recheck } = applyProbe(
      monitor.state,
      { at, up: outcome.up, cause: outcome.cause },
      config.confirmations,
    );
    monitor.state = state;
    // From when the failure became known: a probe that timed out has already used up its wait.
    if (recheck) scheduler.recheck(monitor.siteId, now() + config.recheckDelaySeconds * 1000);
    if (transition?.kind === 'down' || transition?.kind === 'up') writer.supersedeStatus(monitor.siteId);
    if (transition?.kind === 'down') {
      await repository.recordTransition(monitor.siteId, {
        status: 'down',
        since: transition.startedAt,
        open: { startedAt: transition.startedAt, cause: transition.cause },
      });
      events.emit('site.down', {
        siteId: monitor.siteId,
        url: monitor.url,
        cause: transition.cause,
        firstFailureAt: new Date(transition.startedAt).toISOString(),
      });
    } else if (transition?.kind === 'up') {
      await repository.recordTransition(monitor.siteId, { status: 'up', since: at, closeAt: at });
      events.emit('site.up', {
        siteId: monitor.siteId,
        url: monitor.url,
        downtimeMs: transition.downtimeMs,
        downSince: new Date(transition.downSince).toISOString(),
      });
    } else if (transition?.kind === 'first-up') {
      writer.addStatus({ siteId: monitor.siteId, status: 'up', since: at });
    }
    if (outcome.certificateExpiresAt !== null) await noteCertificate(monitor, outcome.certificateExpiresAt, at);
  }

  async function noteCertificate(monitor: SiteMonitor, expiresAt: number, at: number): Promise<void> {
    const changed = expiresAt !== monitor.certificateExpiresAt;
    monitor.certificateExpiresAt = expiresAt;
    const daysLeft = Math.floor((expiresAt - at) / DAY_MS);
    const warn = daysLeft < config.certificateWarningDays && monitor.certificateWarnedFor !== expiresAt;
    if (warn) monitor.certificateWarnedFor = expiresAt;
    if (changed) await repository.updateMonitor(monitor.siteId, { certificateExpiresAt: expiresAt, updatedAt: at });
    if (!warn) return;
    await repository.updateMonitor(monitor.siteId, { certificateWarnedFor: expiresAt, updatedAt: at });
    events.emit('site.certificate_expiring', {
      siteId: monitor.siteId,
      url: monitor.url,
      daysLeft,
      expiresAt: new Date(expiresAt).toISOString(),
    });
  }

  return { record };
}
