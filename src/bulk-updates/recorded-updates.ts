import type { Plugin, Theme } from '../inventory/index.js';
import { currentActor } from '../shared/actor.js';
import type { BulkUpdatesRepository } from './bulk-updates.repository.js';
import type { UpdateAttempt, UpdateRecorder } from './update-recorder.js';

interface Updatable<T> {
  update(siteId: string, slug: string): Promise<T>;
}
interface WordPressUpdates<C, T> {
  updateCore(siteId: string, options?: { version?: string }): Promise<C>;
  updateTranslations(siteId: string): Promise<T>;
}

/** Who asked for a single-site update: the API token or the dashboard user the request acts as (see shared/actor). */
const requester = (): UpdateAttempt['trigger'] => {
  const actor = currentActor();
  if (!actor) return { kind: 'request', id: null };
  return { kind: actor.kind === 'user' ? 'user' : 'request', id: actor.id };
};

/**
 * The single-site update services with every attempt written to the update history, as a bulk
 * update's are: the composition hands these to the single-site routes. The from-version is the
 * one the inventory last read (the service reads the site itself just after).
 */
export function recordSingleSiteUpdates<
  P extends Updatable<Plugin>,
  T extends Updatable<Theme>,
  W extends WordPressUpdates<{ previousVersion: string; version: string }, { updated: unknown[] }>,
>(
  services: { plugins: P; themes: T; wordpressUpdates: W },
  {
    recorder,
    inventories,
    repository,
  }: {
    recorder: UpdateRecorder;
    inventories: { read(siteId: string): { pluginsJson: string; themesJson: string } | undefined };
    repository: Pick<BulkUpdatesRepository, 'sites'>;
  },
): { plugins: P; themes: T; wordpressUpdates: W } {
  const known = (siteId: string, type: 'plugin' | 'theme', slug: string) => {
    const inventory = inventories.read(siteId);
    const list = inventory
      ? (JSON.parse(type === 'plugin' ? inventory.pluginsJson : inventory.themesJson) as Plugin[])
      : [];
    const item = list.find((candidate) => candidate.slug === slug);
    return { fromVersion: item?.version ?? null, toVersion: item?.update?.version ?? null };
  };
  // An unknown site has no history to write to: the service answers its own 404.
  const track = <R>(attempt: UpdateAttempt, work: () => Promise<R>, versionOf: (result: R) => string | null) =>
    repository.sites({ ids: [attempt.siteId] }).length === 0 ? work() : recorder.track(attempt, work, versionOf);
  const attempt = (siteId: string, type: UpdateAttempt['type'], slug: string | null, versions: object) =>
    ({ siteId, type, slug, fromVersion: null, toVersion: null, ...versions, trigger: requester() }) as UpdateAttempt;
  const item = <S extends Updatable<Plugin | Theme>>(service: S, type: 'plugin' | 'theme'): S =>
    ({
      ...service,
      update: (siteId: string, slug: string) =>
        track(
          attempt(siteId, type, slug, known(siteId, type, slug)),
          () => service.update(siteId, slug),
          (updated) => updated.version,
        ),
    }) as S;

  return {
    plugins: item(services.plugins, 'plugin'),
    themes: item(services.themes, 'theme'),
    wordpressUpdates: {
      ...services.wordpressUpdates,
      updateCore: (siteId: string, options: { version?: string } = {}) =>
        track(
          attempt(siteId, 'core', null, {
            fromVersion: repository.sites({ ids: [siteId] })[0]?.wordpressVersion ?? null,
            toVersion: options.version ?? null,
          }),
          () => services.wordpressUpdates.updateCore(siteId, options),
          (updated) => updated.version,
        ),
      updateTranslations: (siteId: string) =>
        track(
          attempt(siteId, 'translations', null, {}),
          () => services.wordpressUpdates.updateTranslations(siteId),
          () => null,
        ),
    } as W,
  };
}
