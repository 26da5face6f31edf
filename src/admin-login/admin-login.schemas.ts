import { z } from '@hono/zod-openapi';

export const AdminLoginSettingsSchema = z
  .object({
    enabled: z.boolean().openapi({
      description:
        'Whether Sitewarden users may ask for a one-click sign-in link to the site’s wp-admin (`POST /sites/{siteId}/admin-login`); default true.',
    }),
  })
  .openapi('AdminLoginSettings');

export const UpdateAdminLoginSettingsInput = z
  .object({
    enabled: z.boolean().nullable().openapi({ description: 'On or off; null restores the default (on).' }),
  })
  .partial()
  .strict()
  .openapi('UpdateAdminLoginSettingsInput');

export const AdminLoginLinkSchema = z
  .object({
    url: z.string().openapi({
      description:
        'Open this in a browser within the minute: it signs in to the site’s wp-admin as the WordPress user Sitewarden acts as, once. A secret: do not log or share it.',
      example: 'https://example.com/wp-login.php?sitewarden_login=9f86d081884c7d65…',
    }),
    expiresAt: z.string().openapi({ description: 'When the link stops working, if not used before.' }),
  })
  .openapi('AdminLoginLink');

export type AdminLoginSettings = z.infer<typeof AdminLoginSettingsSchema>;
export type AdminLoginSettingsPatch = z.infer<typeof UpdateAdminLoginSettingsInput>;
export type AdminLoginLink = z.infer<typeof AdminLoginLinkSchema>;
