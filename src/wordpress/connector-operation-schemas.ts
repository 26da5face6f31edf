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
