/**
 * A site's audit settings: its stored row read with the configured defaults (no row: enabled, every
 * form factor, the default runs and interval), and a settings patch turned into the write that applies it.
 */
import type { PerformanceConfig } from './performance.config.js';
import type { PerformanceRepository } from './performance.repository.js';
import { formFactors, type FormFactor, type PerformanceSettingsRow } from './performance.table.js';

export interface PerformanceSettings {
  enabled: boolean;
  formFactors: FormFactor[];
  runs: number;
  /** Hours between scheduled audits (the site's own, else the configured default). */
  intervalHours: number;
}

/** A settings change; `intervalHours: null` restores the configured default. */
export type PerformanceSettingsPatch = Partial<Omit<PerformanceSettings, 'intervalHours'>> & {
  intervalHours?: number | null;
};

export function createAuditSettings({
  repository,
  config,
}: {
  repository: PerformanceRepository;
  config: Pick<PerformanceConfig, 'defaultRuns' | 'intervalHours'>;
}) {
  function settingsFrom(row: PerformanceSettingsRow | null | undefined): PerformanceSettings {
    if (!row)
      return {
        enabled: true,
        formFactors: [...formFactors],
        runs: config.defaultRuns,
        intervalHours: config.intervalHours,
      };
    return {
      enabled: row.enabled,
      formFactors: row.formFactors
        .split(',')
        .filter((value): value is FormFactor => (formFactors as readonly string[]).includes(value)),
      runs: row.runs,
      intervalHours: row.intervalHours ?? config.intervalHours,
    };
  }

  const settingsOf = (siteId: string): PerformanceSettings => settingsFrom(repository.readSettings(siteId));

  /** The write that applies a settings patch (the caller has checked the site); it keeps the schedule's last slot. */
  function writeOf(siteId: string, { intervalHours, ...changes }: PerformanceSettingsPatch): () => PerformanceSettings {
    return () => {
      const current = repository.readSettings(siteId);
      const next = { ...settingsOf(siteId), ...changes };
      repository.writeSettings({
        siteId,
        enabled: next.enabled,
        formFactors: [...new Set(next.formFactors)].join(','),
        runs: next.runs,
        intervalHours: intervalHours === undefined ? (current?.intervalHours ?? null) : intervalHours,
        lastScheduledAt: current?.lastScheduledAt ?? null,
      });
      return settingsOf(siteId);
    };
  }

  return { settingsFrom, settingsOf, writeOf };
}

export type AuditSettings = ReturnType<typeof createAuditSettings>;
