import { z } from 'zod';
import { commonProblems } from '../shared/errors.js';
import { parseStored } from '../shared/stored-json.js';
import type { SiteRow } from '../sites/index.js';
import { initialState, type MonitorState, type SiteMonitor } from './monitor-state.js';
import type { UptimeConfig } from './uptime.config.js';
import type { UptimeRepository } from './uptime.repository.js';
import type { MonitoringSettingsPatch, MonitoringSettingsView } from './uptime.schemas.js';
import type { UptimeMonitorRow } from './uptime.table.js';

/**
 * A site's monitoring settings: what its monitor row holds, with the configured defaults where it
 * holds nothing, read back for the API and the dashboard; and a `monitoring` patch checked (the
 * timeout shorter than the interval) before anything is written, then written and handed to the
 * site's monitor in memory so the next probe follows it.
 */

/** What `expectedStatusJson` holds: the statuses the settings route accepted (uptime.schemas.ts). */
const ExpectedStatus = z.array(z.number().int());

export function settingsOf(row: UptimeMonitorRow | undefined, config: UptimeConfig): MonitoringSettingsView {
  return {
    intervalSeconds: row?.intervalSeconds ?? config.defaultIntervalSeconds,
    timeoutMs: row?.timeoutMs ?? config.defaultTimeoutMs,
    expectedStatus: row?.expectedStatusJson
      ? parseStored(ExpectedStatus, row.expectedStatusJson, `the expected statuses of site ${row.siteId}`)
      : null,
    keyword: row?.keyword ? { text: row.keyword, mode: row.keywordMode } : null,
    paused: row?.paused ?? false,
  };
}

function invalid(field: string, message: string) {
  return commonProblems.validation.create(`invalid request body: ${field}: ${message}`, {
    errors: [{ field, in: 'body', message }],
  });
}

export function createMonitoringSettings({
  repository,
  config,
  now,
  requireSite,
  monitors,
  track,
}: {
  repository: UptimeRepository;
  config: UptimeConfig;
  now: () => number;
  requireSite: (siteId: string) => Promise<SiteRow>;
  monitors: ReadonlyMap<string, SiteMonitor>;
  /** Puts the site's monitor in memory with these settings where it is probed (uptime.service.ts). */
  track: (siteId: string, url: string, row: UptimeMonitorRow, state: MonitorState) => void;
}) {
  return {
    async monitoringSettings(siteId: string): Promise<MonitoringSettingsView> {
      await requireSite(siteId);
      return settingsOf(await repository.findMonitor(siteId), config);
    },

    /**
     * Validates a `monitoring` patch (null values restore the defaults) and returns the write that
     * applies it, so a PATCH with several sections writes nothing when any section is invalid.
     */
    async prepareSettings(
      siteId: string,
      patch: MonitoringSettingsPatch,
    ): Promise<() => Promise<MonitoringSettingsView>> {
      const site = await requireSite(siteId);
      const current = await repository.findMonitor(siteId);
      const changes: Partial<UptimeMonitorRow> = {};
      if (patch.intervalSeconds !== undefined) changes.intervalSeconds = patch.intervalSeconds;
      if (patch.timeoutMs !== undefined) changes.timeoutMs = patch.timeoutMs;
      if (patch.expectedStatus !== undefined)
        changes.expectedStatusJson = patch.expectedStatus === null ? null : JSON.stringify(patch.expectedStatus);
      if (patch.keyword !== undefined) {
        changes.keyword = patch.keyword?.text ?? null;
        changes.keywordMode = patch.keyword?.mode ?? 'present';
      }
      if (patch.paused !== undefined) changes.paused = patch.paused;
      const next = settingsOf({ ...current, ...changes } as UptimeMonitorRow, config);
      if (next.timeoutMs >= next.intervalSeconds * 1000)
        throw invalid(
          'monitoring.timeoutMs',
          `the timeout (${next.timeoutMs} ms) must be shorter than the interval (${next.intervalSeconds} s)`,
        );
      return async () => {
        const row = await repository.writeSettings(siteId, { ...changes, updatedAt: now() });
        if (site.state === 'connected')
          track(siteId, site.url, row, monitors.get(siteId)?.state ?? initialState(row.status, row.statusSince));
        return settingsOf(row, config);
      };
    },
  };
}
