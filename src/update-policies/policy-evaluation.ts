import type { SiteUpdateState } from '../inventory/index.js';
import { compareVersions } from '../wordpress/connector-client.js';
import { windowsAt, type WindowSpan } from './maintenance-window.js';
import type { PolicySettings } from './update-policies.schemas.js';
import { parseTimeZone, type TimeZone } from '../shared/time-zone.js';

const DAY = 24 * 60 * 60_000;
const UTC = parseTimeZone('UTC')!;

/** What bulk updates take: one site's one update, with the version expected after it. */
export interface UpdateTarget {
  siteId: string;
  type: 'plugin' | 'theme' | 'core' | 'translations';
  slug?: string;
  version?: string;
}

export interface PolicyForEvaluation {
  id: string;
  siteId: string | null;
  tag: string | null;
  priority: number;
  settings: PolicySettings;
}

/** A version a safe update rolled back on the site: not applied again until released (update-holds.ts). */
export interface HeldVersion {
  id: string;
  type: 'plugin' | 'theme' | 'core';
  slug: string;
  version: string;
  heldAt: Date;
  outcome: 'rolled-back' | 'rollback-failed';
  reason: string | null;
  message: string | null;
  safeUpdateId: string | null;
}

interface Skipped {
  type: UpdateTarget['type'];
  slug: string | null;
  version: string | null;
  reason: 'kind-off' | 'ignored' | 'held' | 'pinned' | 'release-delay';
  eligibleAt: Date | null;
  /** For `held`: the hold, with when and why the version was rolled back. */
  hold?: HeldVersion;
}

export interface SitePlan {
  siteId: string;
  policyId: string;
  timeZone: string;
  timeZoneSource: 'policy' | 'site' | 'default';
  /** The window open at `now`, if any. */
  openWindow: WindowSpan | null;
  nextWindow: WindowSpan;
  /** What is eligible at `now` (applied only while a window is open). */
  updates: UpdateTarget[];
  skipped: Skipped[];
}

/**
 * Which policy governs a site: its own policy always wins (even disabled: that keeps it out of
 * tag policies); else, among the policies of its tags, the highest priority, then the oldest.
 * Policies come ordered by id, which is creation order. Built once, asked per site.
 */
export function policyResolver<P extends PolicyForEvaluation>(
  policies: readonly P[],
): (site: { siteId: string; tags: readonly string[] }) => P | null {
  const bySite = new Map<string, P>();
  const byTag = new Map<string, P>();
  for (const policy of policies) {
    if (policy.siteId !== null) bySite.set(policy.siteId, policy);
    else if (policy.tag !== null && !byTag.has(policy.tag)) byTag.set(policy.tag, policy);
  }
  const order = new Map(policies.map((policy, index) => [policy, index]));
  return ({ siteId, tags }) => {
    const own = bySite.get(siteId);
    if (own) return own;
    let best: P | null = null;
    for (const tag of tags) {
      const policy = byTag.get(tag);
      if (
        policy &&
        (!best ||
          policy.priority > best.priority ||
          (policy.priority === best.priority && order.get(policy)! < order.get(best)!))
      )
        best = policy;
    }
    return best;
  };
}

/** The zone the policy's windows are read in for one site, and where it came from. */
export function zoneFor(
  settings: PolicySettings,
  siteZone: string | null,
): { zone: TimeZone; source: SitePlan['timeZoneSource'] } {
  const fromPolicy = settings.window.timeZone ? parseTimeZone(settings.window.timeZone) : null;
  if (fromPolicy) return { zone: fromPolicy, source: 'policy' };
  const fromSite = siteZone ? parseTimeZone(siteZone) : null;
  if (fromSite) return { zone: fromSite, source: 'site' };
  return { zone: UTC, source: 'default' };
}

/** Same major release (`6.5` of `6.5.3`): WordPress's own line between minor and major updates. */
function isMinorCoreUpdate(from: string | null, to: string): boolean {
  if (!from) return false;
  const branch = (version: string) =>
    version
      .split('.')
      .slice(0, 2)
      .map((part) => parseInt(part, 10) || 0);
  const [a, b] = [branch(from), branch(to)];
  return a[0] === b[0] && (a[1] ?? 0) === (b[1] ?? 0);
}

/**
 * What a policy does on one site at `now`: the window open now or next, and the updates eligible
 * now (kind switched on, not ignored, not a version held on the site, not past a pin, first seen
 * at least the release delay ago). Pure: everything it needs is passed in, the clock and the
 * site's holds included.
 */
export function evaluateSite(
  policy: PolicyForEvaluation,
  site: SiteUpdateState,
  now: Date,
  holds: readonly HeldVersion[] = [],
): SitePlan {
  const { settings } = policy;
  const { zone, source } = zoneFor(settings, site.timeZone);
  const { open, next } = windowsAt(settings.window, zone, now);
  const updates: UpdateTarget[] = [];
  const skipped: Skipped[] = [];
  const delayMs = settings.releaseDelayDays * DAY;
  const ignored = (type: string, slug: string) => settings.ignore.some((i) => i.type === type && i.slug === slug);
  const pinOf = (type: string, slug: string) => settings.pins.find((p) => p.type === type && p.slug === slug);
  const heldOn = (type: string, slug: string, version: string) =>
    holds.find((h) => h.type === type && h.slug === slug && h.version === version);
  const skip = (entry: Omit<Skipped, 'eligibleAt'>, eligibleAt: Date | null = null) =>
    skipped.push({ ...entry, eligibleAt });
  /** Whether an offer clears the ignore list, the holds, the pins and the release delay; records why not. */
  const passes = (type: 'plugin' | 'theme' | 'core', slug: string, version: string, firstSeenAt: Date | null) => {
    if (ignored(type, slug)) return (skip({ type, slug, version, reason: 'ignored' }), false);
    const hold = heldOn(type, slug, version);
    if (hold) return (skip({ type, slug, version, reason: 'held', hold }), false);
    const pin = pinOf(type, slug);
    if (pin && compareVersions(version, pin.version) > 0)
      return (skip({ type, slug, version, reason: 'pinned' }), false);
    // An offer never seen is treated as seen now: its delay starts at this sync.
    const seen = (firstSeenAt ?? now).getTime();
    if (now.getTime() - seen < delayMs)
      return (skip({ type, slug, version, reason: 'release-delay' }, new Date(seen + delayMs)), false);
    return true;
  };

  for (const item of site.items) {
    if (!item.updateVersion) continue;
    const on = item.type === 'plugin' ? settings.kinds.plugins : settings.kinds.themes;
    if (!on) skip({ type: item.type, slug: item.slug, version: item.updateVersion, reason: 'kind-off' });
    else if (passes(item.type, item.slug, item.updateVersion, item.firstSeenAt))
      updates.push({ siteId: site.siteId, type: item.type, slug: item.slug, version: item.updateVersion });
  }

  // Core: the newest offer the policy allows (a major may be skipped while its minor applies).
  let core: string | null = null;
  const offers = [...site.core.offers].sort((a, b) => compareVersions(b.version, a.version));
  for (const offer of offers) {
    if (site.core.version && compareVersions(offer.version, site.core.version) <= 0) continue;
    const minor = isMinorCoreUpdate(site.core.version, offer.version);
    if (!(minor ? settings.kinds.coreMinor : settings.kinds.coreMajor))
      skip({ type: 'core', slug: 'wordpress', version: offer.version, reason: 'kind-off' });
    else if (passes('core', 'wordpress', offer.version, offer.firstSeenAt) && core === null) core = offer.version;
  }
  if (core) updates.push({ siteId: site.siteId, type: 'core', version: core });

  if (site.translationsFirstSeenAt) {
    const seen = site.translationsFirstSeenAt.getTime();
    if (!settings.kinds.translations) skip({ type: 'translations', slug: null, version: null, reason: 'kind-off' });
    else if (now.getTime() - seen < delayMs)
      skip({ type: 'translations', slug: null, version: null, reason: 'release-delay' }, new Date(seen + delayMs));
    else updates.push({ siteId: site.siteId, type: 'translations' });
  }

  return {
    siteId: site.siteId,
    policyId: policy.id,
    timeZone: zone.name,
    timeZoneSource: source,
    openWindow: open,
    nextWindow: next,
    updates,
    skipped,
  };
}

/**
 * The dry run: what the policy would apply in the window open now, or else in the next one,
 * judged at the moment that window opens (release delays may have run out by then).
 */
export function previewSite(
  policy: PolicyForEvaluation,
  site: SiteUpdateState,
  now: Date,
  holds: readonly HeldVersion[] = [],
): SitePlan & { window: WindowSpan } {
  const current = evaluateSite(policy, site, now, holds);
  if (current.openWindow) return { ...current, window: current.openWindow };
  const atOpening = evaluateSite(policy, site, current.nextWindow.start, holds);
  return { ...atOpening, openWindow: null, nextWindow: current.nextWindow, window: current.nextWindow };
}
