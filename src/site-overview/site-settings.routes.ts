import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import type { SettingsSection } from '../http/settings-section.js';
import { SiteIdParam } from '../sites/index.js';

const mapSections = <T>(sections: Record<string, SettingsSection>, pick: (section: SettingsSection) => T) =>
  Object.fromEntries(Object.entries(sections).map(([name, section]) => [name, pick(section)]));

/**
 * A site's settings, one section per feature (uptime's `monitoring`, `backups`, `performance`, `adminLogin`),
 * put side by side in the order given. Each section validates its patch before anything is
 * written, so a PATCH with an invalid section changes nothing at all.
 */
export function createSiteSettingsRoutes({ settingsSections }: { settingsSections: Record<string, SettingsSection> }) {
  const UpdateSiteInput = z
    .object(mapSections(settingsSections, (section) => section.input.optional()))
    .strict()
    .openapi('UpdateSiteInput');
  const SiteSettingsSchema = z
    .object(mapSections(settingsSections, (section) => section.schema))
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
      'Each section is optional. `monitoring` changes how the site is probed: interval, timeout, expected status, keyword, paused. `backups` changes its backup schedule and retention: `enabled`, `intervalHours`, `keepLast`, `keepDays`, `keepDaily`, `keepWeekly`, `keepMonthly`, `keepYearly`. `performance` changes its Lighthouse audit schedule: `enabled`, `formFactors`, `runs`, `intervalHours`. `adminLogin` turns one-click sign-in to the site’s wp-admin on or off: `enabled`. Fields left out keep their value; null restores the default. An invalid field anywhere changes nothing.',
    request: {
      params: SiteIdParam,
      body: { required: true, content: { 'application/json': { schema: UpdateSiteInput } } },
    },
    responses: {
      200: jsonContent(SiteSettingsSchema, 'The site’s settings now'),
      ...problemResponses(400, 403, 404, 415),
    },
  });

  /** Every section as it is, read one after the other (each checks the site). */
  const settingsOf = async (id: string) => {
    const read: Record<string, unknown> = {};
    for (const [name, section] of Object.entries(settingsSections)) read[name] = await section.read(id);
    return read;
  };
  return new OpenAPIHono<AppEnv>()
    .openapi(getSettings, async (c) => c.json(await settingsOf(c.req.valid('param').id), 200))
    .openapi(updateSite, async (c) => {
      const { id } = c.req.valid('param');
      const patch = c.req.valid('json') as Record<string, unknown>;
      // Validate every section first; only then write.
      const writes: (() => unknown)[] = [];
      for (const [name, section] of Object.entries(settingsSections))
        if (patch[name] !== undefined) writes.push(await section.prepare(id, patch[name]));
      for (const write of writes) await write();
      return c.json(await settingsOf(id), 200);
    });
}
