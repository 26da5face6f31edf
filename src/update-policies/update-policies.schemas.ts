import { z } from '@hono/zod-openapi';
import { SlugPattern, TagName } from '../sites/index.js';
import { WEEKDAYS } from './maintenance-window.js';
import { parseTimeZone } from '../shared/time-zone.js';
import { UnattendedChecksSchema } from '../shared/safe-update-checks.js';

/** Days as people list them, Monday first. */
const WEEK = [...WEEKDAYS.slice(1), WEEKDAYS[0]];

const Time = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time is HH:MM, 00:00 to 23:59')
  .openapi({ example: '02:00' });

const Slug = z.string().min(1).max(200).regex(SlugPattern, 'a slug is letters, digits, `.`, `_` and `-`');
const Version = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[0-9A-Za-z.+_-]+$/, 'a version is digits, letters, `.`, `+`, `_` and `-`');
const ItemType = z.enum(['plugin', 'theme', 'core']).openapi({
  description: '`core` is WordPress itself (its slug is `wordpress`).',
});

const KindsSchema = z
  .object({
    coreMinor: z.boolean().default(false).openapi({ description: 'WordPress maintenance releases (6.5.3 → 6.5.5).' }),
    coreMajor: z.boolean().default(false).openapi({ description: 'WordPress feature releases (6.5.x → 6.6).' }),
    plugins: z.boolean().default(false),
    themes: z.boolean().default(false),
    translations: z.boolean().default(false),
  })
  .openapi('UpdatePolicyKinds', { description: 'Which kinds of update the policy applies by itself.' });

const WindowSchema = z
  .object({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1)
      .max(7)
      .transform((days) => WEEK.filter((day) => days.includes(day)))
      .openapi({ description: 'The days the window opens on (local to the site).', example: ['mon', 'wed'] }),
    start: Time.openapi({ description: 'When it opens, local time.' }),
    end: Time.openapi({
      description:
        'When it closes, local time. At or before `start` it closes the next day (22:00–04:00 crosses midnight); equal to `start` is 24 hours.',
      example: '05:00',
    }),
    timeZone: z
      .string()
      .max(64)
      .nullable()
      .default(null)
      .refine((zone) => zone === null || parseTimeZone(zone) !== null, {
        message: 'not a time zone: give an IANA name such as Europe/Berlin, or an offset such as UTC+05:30',
      })
      .openapi({
        description:
          'Overrides the site’s own time zone (WordPress’s `timezone_string` or `gmt_offset`, read at each sync). Null: each site’s own; UTC when a site does not say.',
        example: null,
      }),
  })
  .openapi('UpdatePolicyWindow');

const PinSchema = z
  .object({ type: ItemType, slug: Slug, version: Version })
  .openapi('UpdatePolicyPin', { description: 'Never update this item past `version` (updates up to it still apply).' });
const IgnoreSchema = z
  .object({ type: ItemType, slug: Slug })
  .openapi('UpdatePolicyIgnore', { description: 'Never update this item automatically.' });

/** What a policy says, as stored (settings_json) and as the API shows it. */
export const PolicySettingsSchema = z.object({
  enabled: z.boolean().default(true).openapi({
    description:
      'A disabled policy starts nothing; a disabled *site* policy still wins over tag policies, which keeps the site out of them.',
  }),
  kinds: KindsSchema.prefault({}),
  window: WindowSchema,
  releaseDelayDays: z.number().int().min(0).max(365).default(0).openapi({
    description: 'Only versions the site was first offered at least this many days ago.',
  }),
  pins: z.array(PinSchema).max(500).default([]),
  ignore: z.array(IgnoreSchema).max(500).default([]),
  safe: z.boolean().default(true).openapi({
    description:
      'Apply plugin, theme and core updates as safe updates (checks before and after, a restore point, a rollback when the site broke; docs/safe-updates.md). On by default for scheduled runs.',
  }),
  checks: UnattendedChecksSchema.prefault({}).openapi({
    description:
      'How those safe updates check the sites and when they roll back: a safe update’s `policy` object, except that nobody watches an unattended run, so `visual.rollback` defaults to true (a page changed beyond `visual.threshold`, default 3 % of its pixels, is rolled back and held).',
  }),
});
export type PolicySettings = z.output<typeof PolicySettingsSchema>;

const Priority = z.number().int().min(-1000).max(1000).default(0).openapi({
  description: 'Among tag policies matching one site, the highest priority wins (then the one created first).',
});

export const CreatePolicyInput = PolicySettingsSchema.extend({
  name: z.string().trim().min(1).max(200),
  siteId: z.string().min(1).max(64).optional().openapi({ description: 'The site this policy is for.' }),
  tag: TagName.optional().openapi({ description: 'Or: the tag whose sites this policy is for.' }),
  priority: Priority,
}).openapi('UpdatePolicyInput');

export const UpdatePolicyInput = PolicySettingsSchema.extend({
  name: z.string().trim().min(1).max(200),
  priority: Priority,
}).openapi('UpdatePolicyReplace', { description: 'The whole policy again; its site or tag stays.' });

export const PolicySchema = PolicySettingsSchema.extend({
  id: z.string(),
  name: z.string(),
  siteId: z.string().nullable(),
  tag: z.string().nullable(),
  priority: z.number().int(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
}).openapi('UpdatePolicy');

export const PolicyIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'upol_01hx0000000000000000000000' }),
});

const TargetSchema = z
  .object({
    siteId: z.string(),
    type: z.enum(['plugin', 'theme', 'core', 'translations']),
    slug: z.string().optional().openapi({ description: 'The plugin or theme; none for core and translations.' }),
    version: z
      .string()
      .optional()
      .openapi({ description: 'The version expected after the update; none for translations (every pending pack).' }),
  })
  .openapi('UpdateTarget');

export const HoldSchema = z
  .object({
    id: z.string(),
    siteId: z.string(),
    type: ItemType,
    slug: z.string(),
    version: z.string().openapi({ description: 'The version rolled back: policies skip it on this site.' }),
    outcome: z.enum(['rolled-back', 'rollback-failed']).openapi({
      description:
        'How the safe update ended: `rolled-back` (the previous version is back and healthy) or `rollback-failed` (the site stayed broken).',
    }),
    reason: z.string().nullable().openapi({ description: 'Why the safe update judged the site broken.' }),
    message: z.string().nullable(),
    safeUpdateId: z.string().nullable(),
    heldAt: z.string().datetime().openapi({ description: 'When the rollback happened.' }),
    releasedAt: z.string().datetime().nullable(),
    releasedBy: z
      .object({ kind: z.enum(['token', 'user']), id: z.string() })
      .nullable()
      .openapi({ description: 'Who released it: an API token or a dashboard user, by id.' }),
  })
  .openapi('UpdateHold', {
    description:
      'A version a safe update rolled back on a site: update policies skip that very version there until it is released (a newer version applies as usual).',
  });

export const HoldIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'hold_01hx0000000000000000000000' }),
});

export const HoldListQuery = z.object({
  siteId: z.string().min(1).max(64).optional().openapi({ description: 'Only this site’s holds.' }),
  state: z
    .enum(['held', 'released', 'all'])
    .default('held')
    .openapi({ description: '`held` (default): the active holds; `released`; or `all`.' }),
});

const SkippedSchema = z
  .object({
    type: z.enum(['plugin', 'theme', 'core', 'translations']),
    slug: z.string().nullable(),
    version: z.string().nullable(),
    reason: z.enum(['kind-off', 'ignored', 'held', 'pinned', 'release-delay']),
    eligibleAt: z
      .string()
      .datetime()
      .nullable()
      .openapi({ description: 'For `release-delay`: when the version is old enough.' }),
    hold: HoldSchema.optional().openapi({
      description:
        'For `held`: the hold, with the date (`heldAt`) and the reason of the rollback; release it to apply the version.',
    }),
  })
  .openapi('UpdatePolicySkipped');

const SpanSchema = z.object({ start: z.string().datetime(), end: z.string().datetime() });

const SitePlanSchema = z
  .object({
    siteId: z.string(),
    url: z.string(),
    policyId: z.string(),
    timeZone: z.string(),
    timeZoneSource: z
      .enum(['policy', 'site', 'default'])
      .openapi({ description: '`default`: neither the policy nor the site names a time zone; UTC.' }),
    window: SpanSchema.openapi({ description: 'The window the plan is for: the one open now, else the next.' }),
    windowOpen: z.boolean(),
    nextWindow: SpanSchema.openapi({ description: 'The next window to open after now.' }),
    updates: z.array(TargetSchema).openapi({ description: 'What the policy would apply in `window`.' }),
    skipped: z.array(SkippedSchema),
    alreadyRun: z.boolean().openapi({ description: 'Whether this window already started a run on this site.' }),
  })
  .openapi('UpdatePolicySitePlan');

export const PreviewSchema = z
  .object({
    policyId: z.string(),
    at: z.string().datetime(),
    sites: z
      .array(SitePlanSchema)
      .openapi({ description: 'Each site the policy governs (others’ site policies win).' }),
    nextCursor: z
      .string()
      .nullable()
      .openapi({ description: 'Pass as `cursor` for the next sites; null on the last page.' }),
  })
  .openapi('UpdatePolicyPreview');

export const SitePreviewSchema = z
  .object({
    at: z.string().datetime(),
    policyId: z.string().nullable().openapi({ description: 'The policy that governs the site; null when none does.' }),
    enabled: z.boolean().nullable(),
    plan: SitePlanSchema.nullable(),
  })
  .openapi('SiteUpdatePolicyPreview');
