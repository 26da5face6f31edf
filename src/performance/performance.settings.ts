import type { z } from '@hono/zod-openapi';
import type { SettingsSection } from '../http/settings-section.js';
import { PerformanceSettingsSchema, UpdatePerformanceSettingsInput } from './performance.schemas.js';
import type { PerformanceService } from './performance.service.js';

/** The `performance` section of a site's settings: its Lighthouse audit schedule. */
export function performanceSettingsSection(
  performance: PerformanceService,
): SettingsSection<
  z.infer<typeof UpdatePerformanceSettingsInput>,
  Awaited<ReturnType<PerformanceService['settings']>>
> {
  return {
    input: UpdatePerformanceSettingsInput,
    schema: PerformanceSettingsSchema,
    read: async (siteId) => performance.settings(siteId),
    prepare: async (siteId, patch) => performance.prepareSettings(siteId, patch),
  };
}
