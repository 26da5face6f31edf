import { describe, expect, it } from 'vitest';
import type { SiteUpdateState } from '../../src/inventory/index.js';
import {
  evaluateSite,
  policyResolver,
  previewSite,
  type PolicyForEvaluation,
} from '../../src/update-policies/policy-evaluation.js';
import { PolicySettingsSchema } from '../../src/update-policies/update-policies.schemas.js';

/** What a policy applies to a site at an instant: a pure function of the policy, the inventory and the clock. */
const DAY = 86_400_000;
const NOW = new Date('2026-01-14T02:30:00Z'); // a Wednesday, inside a 02:00–04:00 UTC window

function policy(settings: Record<string, unknown> = {}, scope: Partial<PolicyForEvaluation> = {}): PolicyForEvaluation {
  return {
    id: 'upol_a',
    siteId: null,
    tag: 'client:acme',
    priority: 0,
    settings: PolicySettingsSchema.parse({
      kinds: { plugins: true, themes: true, coreMinor: true, coreMajor: false, translations: true },
      window: { days: ['wed'], start: '02:00', end: '04:00' },
      ...settings,
    }),
    ...scope,
  };
}

const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);

function site(fields: Partial<SiteUpdateState> = {}): SiteUpdateState {
  return {
    siteId: 'site_1',
    timeZone: 'UTC',
    items: [
      { type: 'plugin', slug: 'seo', updateVersion: '2.0', firstSeenAt: daysAgo(10) },
      { type: 'theme', slug: 'neat', updateVersion: '1.1', firstSeenAt: daysAgo(1) },
    ],
    core: { version: '6.5.3', offers: [] },
    translationsFirstSeenAt: null,
    ...fields,
  };
}

const targets = (plan: { updates: { type: string; slug?: string; version?: string }[] }) =>
  plan.updates.map((u) => `${u.type}:${u.slug ?? ''}@${u.version ?? ''}`);

describe('what is due', () => {
  it('applies every kind switched on while the window is open, with the version expected after it', () => {
    const plan = evaluateSite(policy(), site(), NOW);
    expect(plan.openWindow?.start.toISOString()).toBe('2026-01-14T02:00:00.000Z');
    expect(targets(plan)).toEqual(['plugin:seo@2.0', 'theme:neat@1.1']);
    expect(plan.updates[0]).toEqual({ siteId: 'site_1', type: 'plugin', slug: 'seo', version: '2.0' });
  });

  it('skips kinds switched off, naming them', () => {
    const plan = evaluateSite(policy({ kinds: { plugins: true } }), site(), NOW);
    expect(targets(plan)).toEqual(['plugin:seo@2.0']);
    expect(plan.skipped).toEqual([
      { type: 'theme', slug: 'neat', version: '1.1', reason: 'kind-off', eligibleAt: null },
    ]);
  });

  it('waits out the release delay, counted from when the site was first offered that version', () => {
    // Exactly 10 days: due. Nine days and 23:59: not yet, eligible at the 10-day mark.
    expect(targets(evaluateSite(policy({ releaseDelayDays: 10 }), site(), NOW))).toEqual(['plugin:seo@2.0']);
    const early = site({
      items: [
        { type: 'plugin', slug: 'seo', updateVersion: '2.0', firstSeenAt: new Date(daysAgo(10).getTime() + 60_000) },
      ],
    });
    const plan = evaluateSite(policy({ releaseDelayDays: 10 }), early, NOW);
    expect(plan.updates).toEqual([]);
    expect(plan.skipped).toEqual([
      {
        type: 'plugin',
        slug: 'seo',
        version: '2.0',
        reason: 'release-delay',
        eligibleAt: new Date(NOW.getTime() + 60_000),
      },
    ]);
    // An offer with no first sighting yet starts its delay now; with no delay it applies.
    const unseen = site({ items: [{ type: 'plugin', slug: 'seo', updateVersion: '2.0', firstSeenAt: null }] });
    expect(evaluateSite(policy({ releaseDelayDays: 1 }), unseen, NOW).updates).toEqual([]);
    expect(targets(evaluateSite(policy(), unseen, NOW))).toEqual(['plugin:seo@2.0']);
  });

  it('never goes past a pin; updates up to it apply', () => {
    const pinnedBelow = evaluateSite(policy({ pins: [{ type: 'plugin', slug: 'seo', version: '1.9' }] }), site(), NOW);
    expect(targets(pinnedBelow)).toEqual(['theme:neat@1.1']);
    expect(pinnedBelow.skipped).toEqual([
      { type: 'plugin', slug: 'seo', version: '2.0', reason: 'pinned', eligibleAt: null },
    ]);
    const atPin = evaluateSite(policy({ pins: [{ type: 'plugin', slug: 'seo', version: '2.0' }] }), site(), NOW);
    expect(targets(atPin)).toContain('plugin:seo@2.0');
    // Versions compare numerically: 2.0 is below 2.10.
    const numeric = evaluateSite(policy({ pins: [{ type: 'plugin', slug: 'seo', version: '2.10' }] }), site(), NOW);
    expect(targets(numeric)).toContain('plugin:seo@2.0');
  });

  it('skips a version held on the site after a rollback, and only that version', () => {
    const hold = {
      id: 'hold_1',
      type: 'plugin' as const,
      slug: 'seo',
      version: '2.0',
      heldAt: daysAgo(2),
      outcome: 'rolled-back' as const,
      reason: 'after-check-failed',
      message: 'the home page answered 500',
      safeUpdateId: 'supd_1',
    };
    const plan = evaluateSite(policy(), site(), NOW, [hold]);
    expect(targets(plan)).toEqual(['theme:neat@1.1']);
    expect(plan.skipped).toEqual([
      { type: 'plugin', slug: 'seo', version: '2.0', reason: 'held', eligibleAt: null, hold },
    ]);
    // A newer version is not held; the dry run at the window's opening holds it too.
    const newer = site({ items: [{ type: 'plugin', slug: 'seo', updateVersion: '2.1', firstSeenAt: daysAgo(1) }] });
    expect(targets(evaluateSite(policy(), newer, NOW, [hold]))).toEqual(['plugin:seo@2.1']);
    const later = new Date(NOW.getTime() + 2 * 60 * 60_000);
    expect(previewSite(policy(), site(), later, [hold]).skipped).toEqual([expect.objectContaining({ reason: 'held' })]);
    // Core: a held release is passed over for the newest one that is not.
    const core = site({
      items: [],
      core: {
        version: '6.5.3',
        offers: [
          { version: '6.5.5', firstSeenAt: daysAgo(3) },
          { version: '6.5.4', firstSeenAt: daysAgo(9) },
        ],
      },
    });
    const heldCore = { ...hold, type: 'core' as const, slug: 'wordpress', version: '6.5.5' };
    expect(targets(evaluateSite(policy(), core, NOW, [heldCore]))).toEqual(['core:@6.5.4']);
  });

  it('leaves ignored items alone', () => {
    const plan = evaluateSite(policy({ ignore: [{ type: 'theme', slug: 'neat' }] }), site(), NOW);
    expect(targets(plan)).toEqual(['plugin:seo@2.0']);
    expect(plan.skipped).toEqual([
      { type: 'theme', slug: 'neat', version: '1.1', reason: 'ignored', eligibleAt: null },
    ]);
  });

  it('tells minor from major core updates and picks the newest allowed', () => {
    const offers = [
      { version: '6.6.1', firstSeenAt: daysAgo(3) },
      { version: '6.5.5', firstSeenAt: daysAgo(3) },
    ];
    const minorOnly = evaluateSite(policy(), site({ items: [], core: { version: '6.5.3', offers } }), NOW);
    expect(targets(minorOnly)).toEqual(['core:@6.5.5']);
    expect(minorOnly.skipped).toEqual([
      { type: 'core', slug: 'wordpress', version: '6.6.1', reason: 'kind-off', eligibleAt: null },
    ]);
    const both = policy({ kinds: { coreMinor: true, coreMajor: true } });
    expect(targets(evaluateSite(both, site({ items: [], core: { version: '6.5.3', offers } }), NOW))).toEqual([
      'core:@6.6.1',
    ]);
    // A core pin below the major keeps the site on its branch.
    const pinned = policy({
      kinds: { coreMinor: true, coreMajor: true },
      pins: [{ type: 'core', slug: 'wordpress', version: '6.5.99' }],
    });
    expect(targets(evaluateSite(pinned, site({ items: [], core: { version: '6.5.3', offers } }), NOW))).toEqual([
      'core:@6.5.5',
    ]);
  });

  it('updates translations as a whole once the oldest pending pack is old enough', () => {
    const pending = site({ items: [], translationsFirstSeenAt: daysAgo(2) });
    expect(targets(evaluateSite(policy(), pending, NOW))).toEqual(['translations:@']);
    expect(evaluateSite(policy({ releaseDelayDays: 3 }), pending, NOW).skipped[0]).toMatchObject({
      type: 'translations',
      reason: 'release-delay',
    });
  });

  it('lists what is eligible even while the window is closed, and says when it opens', () => {
    const closed = evaluateSite(policy(), site(), new Date('2026-01-14T04:00:00Z'));
    expect(closed.openWindow).toBeNull();
    expect(closed.nextWindow.start.toISOString()).toBe('2026-01-21T02:00:00.000Z');
  });
});

describe('the dry run', () => {
  it('judges the next window at the moment it opens: a delay running out before then counts', () => {
    const tuesday = new Date('2026-01-13T12:00:00Z');
    const fresh = site({
      items: [{ type: 'plugin', slug: 'seo', updateVersion: '2.0', firstSeenAt: new Date('2026-01-13T00:00:00Z') }],
    });
    const plan = previewSite(policy(), fresh, tuesday);
    expect(plan.window.start.toISOString()).toBe('2026-01-14T02:00:00.000Z');
    expect(plan.openWindow).toBeNull();
    expect(targets(plan)).toEqual(['plugin:seo@2.0']);
    // With a two-day delay it is still too young at that window.
    expect(previewSite(policy({ releaseDelayDays: 2 }), fresh, tuesday).updates).toEqual([]);
  });
});

describe('precedence', () => {
  const tagA = policy({}, { id: 'upol_1', tag: 'client:acme', priority: 0 });
  const tagB = policy({}, { id: 'upol_2', tag: 'ecommerce', priority: 0 });
  const tagHigh = policy({}, { id: 'upol_3', tag: 'staging', priority: 5 });
  const own = policy({ enabled: false }, { id: 'upol_4', tag: null, siteId: 'site_1' });

  it("a site's own policy wins, even disabled", () => {
    expect(policyResolver([tagA, tagB, tagHigh, own])({ siteId: 'site_1', tags: ['client:acme', 'staging'] })?.id).toBe(
      'upol_4',
    );
  });
  it('among tag policies the highest priority wins, then the oldest', () => {
    expect(
      policyResolver([tagA, tagB, tagHigh])({ siteId: 'site_2', tags: ['ecommerce', 'client:acme', 'staging'] })?.id,
    ).toBe('upol_3');
    expect(policyResolver([tagA, tagB])({ siteId: 'site_2', tags: ['ecommerce', 'client:acme'] })?.id).toBe('upol_1');
    expect(policyResolver([tagA, tagB])({ siteId: 'site_2', tags: ['other'] })).toBeNull();
  });
});
