import { html } from 'hono/html';
import type { backupSettingsSection } from '../backups/index.js';

type BackupSettings = Awaited<ReturnType<ReturnType<typeof backupSettingsSection>['read']>>;
type Form = Record<string, unknown>;

/** The backup schedule and retention a site's settings form shows, each with its limits. */
const FIELDS = [
  { name: 'intervalHours', label: 'Back up every (hours)', min: 1, max: 8760 },
  { name: 'keepLast', label: 'Keep the last (backups)', min: 1, max: 10_000 },
  { name: 'keepDays', label: 'And every backup younger than (days)', min: 0, max: 36_500 },
  { name: 'keepDaily', label: 'And the newest of each of the last (days)', min: 0, max: 10_000 },
  { name: 'keepWeekly', label: '… (ISO weeks)', min: 0, max: 10_000 },
  { name: 'keepMonthly', label: '… (months)', min: 0, max: 10_000 },
  { name: 'keepYearly', label: '… (years)', min: 0, max: 1_000 },
] as const;
type FieldName = (typeof FIELDS)[number]['name'];

/**
 * The inputs, each with the value in force and, hidden beside it, the same value as shown: a
 * value the user leaves as it was is not saved, so a site keeps following its tag's retention or
 * the defaults until someone changes that field (an emptied field goes back to following them).
 */
export function backupSettingsFields(settings: BackupSettings) {
  return FIELDS.map(
    (field) =>
      html`<div>
        <label for="backups-${field.name}">${field.label}</label>
        <input
          id="backups-${field.name}"
          name="backups.${field.name}"
          type="number"
          min="${field.min}"
          max="${field.max}"
          value="${settings[field.name]}"
        />
        <input type="hidden" name="backups.${field.name}.shown" value="${settings[field.name]}" />
      </div>`,
  );
}

/** The patch a posted form asks for: changed fields as numbers, emptied ones as null (inherit), the rest left out. */
export function backupSettingsPatch(form: Form): Partial<Record<FieldName, number | null>> & { enabled: boolean } {
  const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : undefined);
  const patch: Partial<Record<FieldName, number | null>> = {};
  for (const { name } of FIELDS) {
    const value = text(`backups.${name}`);
    if (value === undefined) continue;
    if (value === '') patch[name] = null;
    else if (value !== text(`backups.${name}.shown`)) patch[name] = Number(value);
  }
  return { ...patch, enabled: form.backupsEnabled === '1' };
}
