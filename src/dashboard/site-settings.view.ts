import { html } from 'hono/html';
import type { backupSettingsSection } from '../backups/index.js';
import type { performanceSettingsSection } from '../performance/index.js';
import { roleAtLeast } from '../shared/actor.js';
import type { SignedInSession } from '../users/index.js';
import { backupSettingsFields } from './backup-settings.fields.js';
import { csrfField } from './layout.js';
import type { monitoringSettingsSection } from '../uptime/index.js';

/** The site page's settings card (`#settings`): tags, probe and audit intervals, scheduled audits and backups. */

type Read<Section extends (...args: never[]) => { read(siteId: string): unknown }> = Awaited<
  ReturnType<ReturnType<Section>['read']>
>;

export function siteSettingsSection(
  session: SignedInSession,
  siteId: string,
  tags: string[],
  settings: {
    monitoring: Read<typeof monitoringSettingsSection>;
    performance: Read<typeof performanceSettingsSection>;
    backups: Read<typeof backupSettingsSection>;
  },
) {
  return html`<section class="card" id="settings" aria-labelledby="settings-h">
    <h2 id="settings-h">Settings</h2>
    <form
      class="settings-form"
      method="post"
      action="/sites/${siteId}/settings"
      ${roleAtLeast(session.user.role, 'manager') ? '' : 'hidden'}
    >
      ${csrfField(session)}
      <div>
        <label for="tags">Tags (comma separated)</label><input id="tags" name="tags" value="${tags.join(', ')}" />
      </div>
      <div>
        <label for="probe">Probe every (seconds)</label>
        <input
          id="probe"
          name="intervalSeconds"
          type="number"
          min="10"
          max="86400"
          value="${settings.monitoring.intervalSeconds}"
        />
      </div>
      <div>
        <label for="audit">Audit every (hours)</label>
        <input
          id="audit"
          name="auditIntervalHours"
          type="number"
          min="1"
          max="744"
          value="${settings.performance.intervalHours}"
        />
      </div>
      <div class="check">
        <input
          id="audits-on"
          name="auditsEnabled"
          type="checkbox"
          value="1"
          ${settings.performance.enabled ? 'checked' : ''}
        /><label for="audits-on">Scheduled audits</label>
      </div>
      ${backupSettingsFields(settings.backups)}
      <div class="check">
        <input
          id="backups-on"
          name="backupsEnabled"
          type="checkbox"
          value="1"
          ${settings.backups.enabled ? 'checked' : ''}
        /><label for="backups-on">Scheduled backups</label>
      </div>
      <div><button type="submit">Save settings</button></div>
    </form>
  </section>`;
}
