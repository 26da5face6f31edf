import { z } from 'zod';

/**
 * What the connector answers to the operations of issue 15 (plugin status under the
 * dependency rules, core and translation updates). The site is untrusted: every list is
 * bounded and every name is checked for the shape WordPress gives it.
 */

const PluginSlug = z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'expected a plugin slug');
const PluginFile = z.string().max(400);

export const PluginStatusAnswerSchema = z.discriminatedUnion('result', [
  z.looseObject({
    result: z.literal('done'),
    plugin: PluginFile,
    status: z.enum(['active', 'inactive', 'network-active', 'deleted']),
  }),
  z.looseObject({
    result: z.literal('refused'),
    reason: z.enum(['dependencies-unmet', 'required-by']),
    slugs: z.array(PluginSlug).min(1).max(200),
  }),
]);
export type PluginStatusAnswer = z.infer<typeof PluginStatusAnswerSchema>;

const CoreVersion = z.string().regex(/^\d{1,4}(\.\d{1,4}){1,3}(-[A-Za-z0-9.]{1,20})?$/, 'expected a WordPress version');

export const CoreUpdatedSchema = z.looseObject({
  previousVersion: CoreVersion,
  version: CoreVersion,
  dbVersion: z.string().regex(/^\d{1,10}$/),
  databaseUpgraded: z.boolean(),
});
export type CoreUpdated = z.infer<typeof CoreUpdatedSchema>;

const TranslationItem = {
  type: z.enum(['core', 'plugin', 'theme']),
  slug: z.string().max(200),
  language: z.string().regex(/^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,3}$/, 'expected a locale such as de_DE'),
};

export const TranslationsUpdatedSchema = z.looseObject({
  updated: z.array(z.looseObject({ ...TranslationItem, version: z.string().max(200) })).max(5_000),
  failed: z.array(z.looseObject({ ...TranslationItem, message: z.string().max(2_000) })).max(5_000),
});
export type TranslationsUpdated = z.infer<typeof TranslationsUpdatedSchema>;

const ItemVersion = z.string().max(200);
/** An item's offer as the connector names it: the installed version and the one offered. */
const ItemOffer = z.looseObject({ version: ItemVersion, newVersion: ItemVersion }).nullable();

/**
 * The answer to a plugin or theme update that names the version it expects (connector 1.5.0+,
 * feature `updates/expected-version`): updated, with what the inventory needs after it (the
 * item's offer left, a plugin's requirements), or refused (`sitewarden_offer_changed`) with what
 * the site has and offers now. An answer without `result` is an older connector's plain update.
 */
const expectedUpdateAnswer = <T extends z.ZodRawShape>(updated: T) =>
  z.preprocess(
    (answer) =>
      answer && typeof answer === 'object' && !('result' in answer) ? { ...answer, result: 'updated' } : answer,
    z.discriminatedUnion('result', [
      z.looseObject({
        result: z.literal('updated'),
        ...updated,
        previousVersion: ItemVersion,
        version: ItemVersion,
        active: z.boolean(),
        offer: ItemOffer.optional().catch(undefined),
      }),
      z.looseObject({
        result: z.literal('refused'),
        code: z.literal('sitewarden_offer_changed'),
        message: z.string().max(2_000),
        version: ItemVersion.nullable(),
        offer: ItemOffer,
      }),
    ]),
  );

export const ExpectedPluginUpdateSchema = expectedUpdateAnswer({
  plugin: PluginFile,
  requires: z.array(PluginSlug).max(100).optional().catch(undefined),
});
export type ExpectedPluginUpdate = z.infer<typeof ExpectedPluginUpdateSchema>;

export const ExpectedThemeUpdateSchema = expectedUpdateAnswer({ stylesheet: z.string().max(200) });
export type ExpectedThemeUpdate = z.infer<typeof ExpectedThemeUpdateSchema>;
