import type { z } from '@hono/zod-openapi';

/**
 * One section of a site's settings (GET /api/sites/{id}/settings, PATCH /api/sites/{id}), contributed
 * by the feature it configures; the composition puts the sections side by side.
 */
export interface SettingsSection<Patch = unknown, View = unknown> {
  /** The section's patch: fields left out keep their value, null restores the default. */
  input: z.ZodType<Patch>;
  /** The section as it is, defaults filled in. */
  schema: z.ZodType<View>;
  read(siteId: string): Promise<View>;
  /**
   * Validates the patch and returns the write that applies it, so a PATCH with an invalid section writes nothing.
   * The write may be async (a converted repository's, issue 34): callers await what it returns.
   */
  prepare(siteId: string, patch: Patch): Promise<() => unknown>;
}
