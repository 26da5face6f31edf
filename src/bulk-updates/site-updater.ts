import type { Events } from '../shared/event-bus.js';
import { bulkUpdatesProblems } from './bulk-updates.errors.js';
import type { AvailableUpdates } from '../wordpress/connector-client.js';
import { isNothingToUpdate, messageOf, reasonOf, type UpdateAttempt, type UpdateRecorder } from './update-recorder.js';
import type { UpdateItemType } from './update-history.table.js';

interface ItemUpdates {
  update(siteId: string, slug: string): Promise<{ version: string }>;
}
/** What the site offers now: plugins keyed by file, themes by stylesheet (the connector's update list); null when it cannot say. */
export type ReadOffers = (siteId: string) => Promise<AvailableUpdates | null>;

/** The single-site services a bulk update applies through (the same ones the single-site routes call). */
export interface UpdateServices {
  plugins: ItemUpdates;
  themes: ItemUpdates;
  wordpressUpdates: {
    updateCore(siteId: string, options?: { version?: string }): Promise<{ previousVersion: string; version: string }>;
    updateTranslations(siteId: string): Promise<{ updated: unknown[] }>;
  };
}

/** How a safe update of one item ended (the safe-updates feature's report, as far as a bulk update needs it). */
export interface SafeOutcome {
  id: string;
  status: string;
  reason: string | null;
  message: string | null;
  toVersion: string | null;
}
/** Updates one plugin, theme or core safely: checks, restore point, update, checks, rollback when the site broke. */
export type SafeUpdate = (request: {
  siteId: string;
  type: 'plugin' | 'theme' | 'core';
  slug: string;
  version?: string;
}) => Promise<SafeOutcome>;

/** One thing to update on one site, as planned: from the inventory, and the version expected (null: whatever is offered). */
export interface PlannedItem {
  type: UpdateItemType;
  slug: string | null;
  fromVersion: string | null;
  toVersion: string | null;
}
type ItemState = 'pending' | 'succeeded' | 'failed' | 'skipped';
export interface ItemOutcome extends PlannedItem {
  state: ItemState;
  reason: string | null;
  message: string | null;
}

/**
 * Plugins first, then themes, then translations, core last: a core update is the biggest change
 * (new files, a database upgrade) and the one most likely to fail, so everything else is done
 * before it, and plugins and themes are already at versions made for the new core when it lands.
 * Within a type by slug, so runs are repeatable.
 */
const ORDER: Record<UpdateItemType, number> = { plugin: 0, theme: 1, translations: 2, core: 3 };
const inUpdateOrder = <T extends { type: UpdateItemType; slug: string | null }>(items: T[]): T[] =>
  [...items].sort((a, b) => ORDER[a.type] - ORDER[b.type] || (a.slug ?? '').localeCompare(b.slug ?? ''));

/**
 * Applies one site's items one after the other through the single-site services (so the same
 * rules hold: the connector's plugin dependency rules, WordPress's upgraders, the site's queue),
 * recording each attempt. Never throws: each item ends succeeded, failed or skipped.
 */
export function createSiteUpdater({
  services,
  readOffers,
  recorder,
  events,
  safeUpdate,
}: {
  services: UpdateServices;
  readOffers: ReadOffers;
  recorder: UpdateRecorder;
  events: Events;
  /** For bulk updates asked to be safe (and policies, whose runs are safe by default). */
  safeUpdate: SafeUpdate;
}) {
  /** Offers by item: a plugin's slug is its folder (or its file without .php), as the inventory names it. */
  async function offersOf(siteId: string) {
    const updates = await readOffers(siteId);
    if (!updates) return null;
    const plugins = new Map(
      Object.entries(updates.plugins).map(([file, offer]) => {
        const name = file.replace(/\.php$/, '');
        return [name.includes('/') ? name.split('/', 1)[0]! : name, offer] as const;
      }),
    );
    return { plugin: plugins, theme: new Map(Object.entries(updates.themes)) };
  }

  return async function applySiteUpdates({
    siteId,
    items,
    trigger,
    jobId,
    safe = false,
    onItem,
  }: {
    siteId: string;
    items: PlannedItem[];
    trigger: UpdateAttempt['trigger'];
    jobId: string;
    safe?: boolean;
    onItem: (outcomes: ItemOutcome[]) => void;
  }): Promise<ItemOutcome[]> {
    const outcomes: ItemOutcome[] = inUpdateOrder(items).map((item) => ({
      ...item,
      state: 'pending',
      reason: null,
      message: null,
    }));
    // One read of what the site offers now, for every plugin and theme item (null: the update itself will say).
    const live = outcomes.some((item) => item.type === 'plugin' || item.type === 'theme')
      ? await offersOf(siteId)
      : null;

    const settle = (outcome: ItemOutcome, changes: Partial<ItemOutcome>) => {
      Object.assign(outcome, changes);
      const fields = {
        bulkId: jobId,
        siteId,
        type: outcome.type,
        slug: outcome.slug,
        fromVersion: outcome.fromVersion,
        toVersion: outcome.toVersion,
      };
      if (outcome.state === 'succeeded') events.emit('update.applied', fields);
      if (outcome.state === 'failed')
        events.emit('update.failed', { ...fields, reason: outcome.reason, message: outcome.message });
      onItem(outcomes);
    };

    for (const outcome of outcomes) {
      const attempt: UpdateAttempt = { siteId, ...outcome, trigger, jobId };
      if ((outcome.type === 'plugin' || outcome.type === 'theme') && live) {
        const offer = live[outcome.type].get(outcome.slug ?? '');
        if (!offer || (outcome.toVersion !== null && offer.newVersion !== outcome.toVersion)) {
          const [reason, message] = !offer
            ? ['no-update-available', `the site offers no update of ${outcome.type} ${outcome.slug} any more`]
            : ['version-changed', `the site now offers ${outcome.slug} ${offer.newVersion}, not ${outcome.toVersion}`];
          const fromVersion = offer?.version ?? outcome.fromVersion;
          recorder.skipped({ ...attempt, fromVersion }, reason, message);
          settle(outcome, { state: 'skipped', reason, message, fromVersion });
          continue;
        }
        outcome.fromVersion = offer.version;
        outcome.toVersion = offer.newVersion;
      }
      try {
        const itemAttempt = { ...attempt, fromVersion: outcome.fromVersion, toVersion: outcome.toVersion };
        const to =
          safe && outcome.type !== 'translations'
            ? await applySafely(siteId, itemAttempt)
            : await applyOne(siteId, itemAttempt);
        settle(outcome, { state: 'succeeded', toVersion: to ?? outcome.toVersion });
      } catch (error) {
        const state = isNothingToUpdate(error) ? 'skipped' : 'failed';
        settle(outcome, { state, reason: reasonOf(error), message: messageOf(error) });
      }
    }
    return outcomes;
  };

  /** A safe update that was not kept fails the item with its decision (`update-rolled-back`, …) or its reason. */
  function applySafely(siteId: string, attempt: UpdateAttempt): Promise<string | null> {
    const type = attempt.type as 'plugin' | 'theme' | 'core';
    const request = {
      siteId,
      type,
      slug: type === 'core' ? 'wordpress' : attempt.slug!,
      ...(attempt.toVersion ? { version: attempt.toVersion } : {}),
    };
    return recorder.track(
      attempt,
      async () => {
        const outcome = await safeUpdate(request);
        if (outcome.status === 'kept') return outcome.toVersion;
        const problem =
          outcome.status === 'rolled-back'
            ? bulkUpdatesProblems.rolledBack
            : outcome.status === 'rollback-failed'
              ? bulkUpdatesProblems.rollbackFailed
              : bulkUpdatesProblems.notUpdatedSafely;
        throw problem.create(
          `safe update ${outcome.id}: ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ''}${outcome.message ? `: ${outcome.message}` : ''}`,
          { safeUpdateId: outcome.id },
        );
      },
      (version) => version,
    );
  }

  function applyOne(siteId: string, attempt: UpdateAttempt): Promise<string | null> {
    const version = (result: { version: string }) => result.version;
    switch (attempt.type) {
      case 'plugin':
        return recorder.track(attempt, () => services.plugins.update(siteId, attempt.slug!), version).then(version);
      case 'theme':
        return recorder.track(attempt, () => services.themes.update(siteId, attempt.slug!), version).then(version);
      case 'core':
        return recorder
          .track(
            attempt,
            () => services.wordpressUpdates.updateCore(siteId, attempt.toVersion ? { version: attempt.toVersion } : {}),
            version,
          )
          .then(version);
      case 'translations':
        return recorder
          .track(
            attempt,
            () => services.wordpressUpdates.updateTranslations(siteId),
            () => null,
          )
          .then(() => null);
    }
  }
}

export type SiteUpdater = ReturnType<typeof createSiteUpdater>;
