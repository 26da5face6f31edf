import type { Events } from '../shared/event-bus.js';
import {
  appliedButUnhealthy,
  logUpdateFailure,
  mayHaveChangedFiles,
  rethrowSiteOperation,
  themeFromWordPress,
  updateProblems,
  withThemeUpdates,
  type Theme,
} from '../inventory/index.js';
import type { ConnectedSite, SiteAccess } from '../wordpress/site-access.js';
import { themesProblems } from './themes.errors.js';
import type { RequestedBy } from '../shared/actor.js';
import type { SingleSiteRecording } from '../update-history/index.js';
import { isAppError } from '../shared/errors.js';

/** What updating a theme needs to know of it: its slug (the stylesheet), its versions for the failure event. */
export type UpdatableTheme = Pick<Theme, 'slug' | 'version' | 'update'>;

/** Themes on a real site: core REST lists them; the connector installs, updates, activates and deletes. */
export function createThemesService({
  access,
  events,
  history,
}: {
  access: SiteAccess;
  events: Events;
  /** Records each update in the update history (none: not recorded). */
  history?: Pick<SingleSiteRecording, 'item'>;
}) {
  async function listWithUpdates({ session, connector }: ConnectedSite): Promise<Theme[]> {
    const [themes, updates] = await Promise.all([session.listThemes(), connector.updatesIfAvailable()]);
    return withThemeUpdates(themes.map(themeFromWordPress), updates).sort((a, b) => a.slug.localeCompare(b.slug));
  }

  async function find(site: ConnectedSite, slug: string): Promise<Theme> {
    const theme = (await listWithUpdates(site)).find((candidate) => candidate.slug === slug);
    if (!theme) throw themesProblems.notFound.create(`${site.site.url} has no theme with the slug ${slug}`, { slug });
    return theme;
  }

  /**
   * Updates one theme (its slug is its stylesheet) on a site the caller already holds (inside its
   * `access.operate`); a failure is logged (theme.update_failed) and rethrown as the theme routes' problem.
   */
  function updateOn(site: ConnectedSite, theme: UpdatableTheme) {
    return failingAs(site, theme, site.connector.updateTheme(theme.slug));
  }

  /** A failed update's problem, logged (theme.update_failed) unless there was nothing to update. */
  function failingAs<T>(site: ConnectedSite, theme: UpdatableTheme, update: Promise<T>): Promise<T> {
    return update.catch(rethrowThemeOperation).catch((error: unknown) => {
      logUpdateFailure(events, 'theme', site, theme, error, [updateProblems.noUpdate, themesProblems.notFound]);
      throw error;
    });
  }

  /** One theme updated, not recorded (`update` records it). */
  function apply(siteId: string, slug: string): Promise<Theme> {
    return access.operate(siteId, async (site) => {
      const theme = await find(site, slug);
      const updated = await updateOn(site, theme);
      // WordPress said the new version is in place: if it then fails, the update is applied and the site unhealthy.
      return find(site, slug).catch((error: unknown) => {
        if (!mayHaveChangedFiles(error)) throw error;
        throw appliedButUnhealthy({ slug, fromVersion: theme.version }, updated.version, error);
      });
    });
  }

  return {
    list: (siteId: string) => access.read(siteId, listWithUpdates),

    /** One theme updated, recorded in the update history (who asked: `requestedBy`) with the restore point it takes first. */
    update(siteId: string, slug: string, options: RequestedBy = {}): Promise<Theme> {
      return history ? history.item('theme', siteId, slug, options, () => apply(siteId, slug)) : apply(siteId, slug);
    },

    /**
     * One theme updated on a site the caller already holds (a bulk update's site, which records the
     * attempt itself), made only when the site offers `expectedVersion` (null: any); a refusal is answered.
     */
    updateExpecting: (site: ConnectedSite, theme: UpdatableTheme, expectedVersion: string | null) =>
      failingAs(site, theme, site.connector.updateExpecting('theme', theme.slug, expectedVersion)),

    /**
     * Installs a theme by slug from the theme directory through the connector (1.8.0+; WordPress's
     * REST API installs plugins only), and with `activate` switches the site to it. Logged as
     * `theme.installed`, naming who asked. A theme installed but refused activation answers
     * `theme-broken` with `installed: true`.
     */
    install(siteId: string, slug: string, options: { activate?: boolean } & RequestedBy = {}): Promise<Theme> {
      return access.operate(siteId, async (site) => {
        const installed = (outcome: { version: string | null; active: boolean }) =>
          events.emit('theme.installed', {
            siteId: site.site.id,
            url: site.site.url,
            slug,
            ...outcome,
            requestedByKind: options.requestedBy?.kind ?? null,
            requestedById: options.requestedBy?.id ?? null,
          });
        const answer = await site.connector
          .installTheme(slug, { activate: options.activate ?? false })
          .catch((error: unknown) => {
            // Only an activation refuses a theme as broken: the install itself went through.
            if (isAppError(error) && error.extensions.siteCode === 'sitewarden_theme_broken') {
              installed({ version: null, active: false });
              throw themesProblems.broken.create(`${slug} was installed but not activated: ${error.detail}`, {
                slug,
                installed: true,
              });
            }
            return rethrowThemeOperation(error);
          });
        installed({ version: answer.version, active: answer.active });
        // With its update offer, as listed; the connector's answer if WordPress does not list it (yet).
        const listed = (await listWithUpdates(site)).find((theme) => theme.slug === answer.stylesheet);
        return (
          listed ?? {
            slug: answer.stylesheet,
            name: answer.name,
            version: answer.version,
            status: answer.active ? 'active' : 'inactive',
            parent: null,
            update: null,
          }
        );
      });
    },

    activate(siteId: string, slug: string): Promise<Theme> {
      return access.operate(siteId, async (site) => {
        const theme = await find(site, slug);
        if (theme.status === 'active') return theme;
        await site.connector.activateTheme(slug).catch(rethrowThemeOperation);
        return find(site, slug);
      });
    },

    remove(siteId: string, slug: string): Promise<void> {
      return access.operate(siteId, async (site) => {
        const themes = await listWithUpdates(site);
        const theme = themes.find((candidate) => candidate.slug === slug);
        if (!theme)
          throw themesProblems.notFound.create(`${site.site.url} has no theme with the slug ${slug}`, { slug });
        const active = themes.find((candidate) => candidate.status === 'active');
        if (theme.status === 'active')
          throw themesProblems.active.create(`${slug} is the active theme; activate another theme before deleting it`, {
            slug,
          });
        if (active?.parent === slug)
          throw themesProblems.active.create(`${slug} is the parent of the active theme ${active.slug}`, { slug });
        await site.connector.deleteTheme(slug).catch(rethrowThemeOperation);
      });
    },
  };
}

/** The theme routes' own error codes; rethrowSiteOperation adds the ones plugins and themes share. */
function rethrowThemeOperation(error: unknown): never {
  return rethrowSiteOperation(error, {
    sitewarden_theme_not_found: (error) => themesProblems.notFound.create(error.detail, error.extensions),
    sitewarden_theme_active: (error) => themesProblems.active.create(error.detail, error.extensions),
    sitewarden_theme_broken: (error) => themesProblems.broken.create(error.detail, error.extensions),
    sitewarden_theme_installed: (error) => themesProblems.alreadyInstalled.create(error.detail, error.extensions),
    sitewarden_theme_not_in_directory: (error) => themesProblems.notInDirectory.create(error.detail, error.extensions),
    sitewarden_install_failed: (error) => updateProblems.operationFailed.create(error.detail, error.extensions),
  });
}

export type ThemesService = ReturnType<typeof createThemesService>;
