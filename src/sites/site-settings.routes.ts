import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { BackupSettingsInput, BackupSettingsSchema } from '../backups/backups.schemas.js';
import type { BackupsService } from '../backups/backups.service.js';
import { MonitoringSettingsInput, MonitoringSettingsSchema } from '../uptime/uptime.schemas.js';
import type { UptimeService } from '../uptime/uptime.service.js';
import { PerformanceSettingsSchema, UpdatePerformanceSettingsInput } from '../performance/performance.schemas.js';
import type { PerformanceService } from '../performance/performance.service.js';
import { SiteIdParam } from './sites.schemas.js';

/**
 * A site's settings, one section per domain. Each section's service validates its patch before
 * anything is written (`prepareSettings` returns the write), so a PATCH with an invalid section
 * changes nothing at all.
 */
const UpdateSiteInput = z
  .object({
    monitoring: MonitoringSettingsInput.optional(),
    backups: BackupSettingsInput.optional(),
    performance: UpdatePerformanceSettingsInput.optional(),
  })
  .strict()
  .openapi('UpdateSiteInput');

const SiteSettingsSchema = z
  .object({
    monitoring: MonitoringSettingsSchema,
    backups: BackupSettingsSchema,
    performance: PerformanceSettingsSchema,
  })
  .openapi('SiteSettings');

const getSettings = createRoute({
  method: 'get',
  path: '/sites/{id}/settings',
  operationId: 'getSiteSettings',
  tags: ['Sites'],
  summary: 'A site’s settings',
  description: 'Every settings section of the site, with defaults filled in.',
  request: { params: SiteIdParam },
  responses: { 200: jsonContent(SiteSettingsSchema, 'The site’s settings'), ...problemResponses(404) },
});

const updateSite = createRoute({
  method: 'patch',
  path: '/sites/{id}',
  operationId: 'updateSite',
  tags: ['Sites'],
  summary: 'Change a site’s settings',
  description:
    'Each section is optional. `monitoring` changes how the site is probed: interval, timeout, expected status, keyword, paused. `backups` changes its backup schedule and retention: `enabled`, `intervalHours`, `keepLast`, `keepDays`. `performance` changes its Lighthouse audit schedule: `enabled`, `formFactors`, `runs`, `intervalHours`. Fields left out keep their value; null restores the default. An invalid field anywhere changes nothing.',
  request: {
    params: SiteIdParam,
    body: { required: true, content: { 'application/json': { schema: UpdateSiteInput } } },
  },
  responses: {
    200: jsonContent(SiteSettingsSchema, 'The site’s settings now'),
    ...problemResponses(400, 403, 404, 415),
  },
});

export function createSiteSettingsRoutes({
  uptime,
  backups,
  performance,
}: {
  uptime: UptimeService;
  backups: BackupsService;
  performance: PerformanceService;
}) {
  const settingsOf = (id: string) => ({
    monitoring: uptime.monitoringSettings(id),
    backups: backups.settings(id),
    performance: performance.settings(id),
  });
  return new OpenAPIHono<AppEnv>()
    .openapi(getSettings, (c) => c.json(settingsOf(c.req.valid('param').id), 200))
    .openapi(updateSite, (c) => {
      const { id } = c.req.valid('param');
      const patch = c.req.valid('json');
      // Validate every section first; only then write.
      const writes = [
        patch.monitoring && uptime.prepareSettings(id, patch.monitoring),
        patch.backups && backups.prepareSettings(id, patch.backups),
        patch.performance && performance.prepareSettings(id, patch.performance),
      ];
      for (const write of writes) write?.();
      return c.json(settingsOf(id), 200);
    });
}
