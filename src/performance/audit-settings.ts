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

  const settingsOf = async (siteId: string): Promise<PerformanceSettings> =>
    settingsFrom(await repository.readSettings(siteId));

  /**
   * The write that applies a settings patch (the caller has checked the site): only the fields it names change
   * (a site without a row gets the defaults with them), and the schedule's last slot stays.
   */
  function writeOf(
    siteId: string,
    { intervalHours, ...changes }: PerformanceSettingsPatch,
  ): () => Promise<PerformanceSettings> {
    const defaults = settingsFrom(undefined);
    const formFactorsOf = (list: FormFactor[]) => [...new Set(list)].join(',');
    return async () => {
      await repository.patchSettings(
        {
          siteId,
          enabled: changes.enabled ?? defaults.enabled,
          formFactors: formFactorsOf(changes.formFactors ?? defaults.formFactors),
          runs: changes.runs ?? defaults.runs,
          intervalHours: intervalHours ?? null,
          lastScheduledAt: null,
        },
        {
          ...(changes.enabled !== undefined && { enabled: changes.enabled }),
          ...(changes.formFactors !== undefined && { formFactors: formFactorsOf(changes.formFactors) }),
          ...(changes.runs !== undefined && { runs: changes.runs }),
          ...(intervalHours !== undefined && { intervalHours }),
        },
      );
      return settingsOf(siteId);
    };
  }

  return { settingsFrom, settingsOf, writeOf };
}

export type AuditSettings = ReturnType<typeof createAuditSettings>;
