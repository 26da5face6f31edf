import type { Events } from '../shared/event-bus.js';
import {
  appliedButUnhealthy,
  logUpdateFailure,
  mayHaveChangedFiles,
  pluginFromWordPress,
  rethrowSiteOperation,
  withPluginUpdates,
  type Plugin,
} from '../inventory/index.js';
import { isAppError, isProblem } from '../shared/errors.js';
import type { PluginStatusAnswer } from '../wordpress/connector-operation-schemas.js';
import type { ConnectedSite, SiteAccess } from '../wordpress/site-access.js';
import { DeletedPluginSchema, WordPressPluginSchema } from '../wordpress/site-schemas.js';
import { pluginsProblems } from './plugins.errors.js';
import type { RequestedBy } from '../shared/actor.js';
import type { SingleSiteRecording } from '../update-history/index.js';

/** What updating a plugin needs to know of it: its file for the connector, its versions for the failure event. */
export type UpdatablePlugin = Pick<Plugin, 'slug' | 'file' | 'version' | 'update'>;

/** Plugins on a real site: core REST for listing, installing, (de)activating, deleting; the connector for updates. */
export function createPluginsService({
  access,
  events,
  history,
}: {
  access: SiteAccess;
  events: Events;
  /** Records each update in the update history (none: not recorded). */
  history?: Pick<SingleSiteRecording, 'item'>;
}) {
  async function listWithUpdates({ session, connector }: ConnectedSite): Promise<Plugin[]> {
    const [plugins, updates] = await Promise.all([session.listPlugins(), connector.updatesIfAvailable()]);
    return withPluginUpdates(plugins.map(pluginFromWordPress), updates).sort((a, b) => a.slug.localeCompare(b.slug));
  }

  async function find(site: ConnectedSite, slug: string): Promise<Plugin> {
    const plugin = (await listWithUpdates(site)).find((candidate) => candidate.slug === slug);
    if (!plugin)
      throw pluginsProblems.notFound.create(`${site.site.url} has no plugin with the slug ${slug}`, { slug });
    return plugin;
  }

  /**
   * Updates one plugin on a site the caller already holds (inside its `access.operate`): the
   * connector applies WordPress's upgrader and the plugin dependency rules; a failure is logged
   * (plugin.update_failed) and rethrown as the plugin routes' problem.
   */
  function updateOn(site: ConnectedSite, plugin: UpdatablePlugin) {
    return failingAs(site, plugin, site.connector.updatePlugin(plugin.file));
  }

  /** A failed update's problem, logged (plugin.update_failed) unless there was nothing to update. */
  function failingAs<T>(site: ConnectedSite, plugin: UpdatablePlugin, update: Promise<T>): Promise<T> {
    return update.catch(rethrowOperation).catch((error: unknown) => {
      logUpdateFailure(events, 'plugin', site, plugin, error, [pluginsProblems.noUpdate, pluginsProblems.notFound]);
      throw error;
    });
  }

  const restPath = (plugin: Plugin) => `wp/v2/plugins/${plugin.file.replace(/\.php$/, '')}`;

  /**
   * Through the connector, which checks WordPress's plugin dependency rules in the same request;
   * through core's REST API (no dependency rules but WordPress's own) when the connector predates that.
   */
  async function setStatus(
    siteId: string,
    slug: string,
    status: 'active' | 'inactive',
    options: { force?: boolean } = {},
  ): Promise<Plugin> {
    return access.operate(siteId, async (site) => {
      const plugin = await find(site, slug);
      if (plugin.status === 'network-active' || plugin.status === status) return plugin;
      const answer = await site.connector
        .changePluginStatus(status === 'active' ? 'activate' : 'deactivate', plugin.file, options)
        .catch(rethrowOperation);
      if (answer) {
        refuseUnlessDone(answer, plugin);
        return { ...plugin, status: answer.status === 'deleted' ? status : answer.status };
      }
      const updated = await site.session
        .call('POST', restPath(plugin), { json: { status }, schema: WordPressPluginSchema })
        .catch(rethrowOperation);
      return { ...pluginFromWordPress(updated), update: plugin.update };
    });
  }

  /** One plugin updated, not recorded (`update` records it). */
  function apply(siteId: string, slug: string): Promise<Plugin> {
    return access.operate(siteId, async (site) => {
      const plugin = await find(site, slug);
      const updated = await updateOn(site, plugin);
      // WordPress said the new version is in place: if it then fails, the update is applied and the site unhealthy.
      return find(site, slug).catch((error: unknown) => {
        if (!mayHaveChangedFiles(error)) throw error;
        throw appliedButUnhealthy({ slug, fromVersion: plugin.version }, updated.version, error);
      });
    });
  }

  return {
    list: (siteId: string) => access.read(siteId, listWithUpdates),

    install(siteId: string, slug: string, options: { activate?: boolean } = {}): Promise<Plugin> {
      const installed = access.operate(siteId, async (site) => {
        const existing = (await site.session.listPlugins())
          .map(pluginFromWordPress)
          .find((plugin) => plugin.slug === slug);
        if (existing)
          throw pluginsProblems.alreadyInstalled.create(
            `${slug} ${existing.version} is already installed on ${site.site.url}`,
            { slug },
          );
        try {
          // Installed inactive, then activated under the dependency rules like any activation.
          await site.session.call('POST', 'wp/v2/plugins', {
            json: { slug, status: 'inactive' },
            schema: WordPressPluginSchema,
          });
          // With its update offer: a directory's stable release can be older than the newest one.
          return await find(site, slug);
        } catch (error) {
          if (isAppError(error) && error.extensions.siteCode === 'plugins_api_failed') {
            throw pluginsProblems.notInDirectory.create(`the plugin directory has no plugin with the slug ${slug}`, {
              slug,
            });
          }
          if (isAppError(error) && error.extensions.siteCode === 'folder_exists') {
            throw pluginsProblems.alreadyInstalled.create(
              `a folder named ${slug} already exists in the site's plugins folder`,
              { slug },
            );
          }
          return rethrowOperation(error);
        }
      });
      if (!options.activate) return installed;
      return installed
        .then(() => setStatus(siteId, slug, 'active'))
        .catch((error: unknown) => {
          if (isProblem(error, pluginsProblems.dependenciesUnmet))
            throw pluginsProblems.dependenciesUnmet.create(`${slug} was installed but not activated: ${error.detail}`, {
              ...error.extensions,
              installed: true,
            });
          throw error;
        });
    },

    /** One plugin updated, recorded in the update history (who asked: `requestedBy`) with the restore point it takes first. */
    update(siteId: string, slug: string, options: RequestedBy = {}): Promise<Plugin> {
      return history ? history.item('plugin', siteId, slug, options, () => apply(siteId, slug)) : apply(siteId, slug);
    },

    /**
     * One plugin updated on a site the caller already holds (a bulk update's site, which records the
     * attempt itself), made only when the site offers `expectedVersion` (null: any): a refusal (the
     * offer changed) is answered, not thrown. Without its `file` (not in the stored inventory) the
     * site's list names it first (plugin-not-found when it is not installed).
     */
    async updateExpecting(
      site: ConnectedSite,
      plugin: Omit<UpdatablePlugin, 'file'> & { file?: string },
      expectedVersion: string | null,
    ) {
      const known = plugin.file ? { ...plugin, file: plugin.file } : await find(site, plugin.slug);
      return failingAs(site, known, site.connector.updateExpecting('plugin', known.file, expectedVersion));
    },

    activate: (siteId: string, slug: string) => setStatus(siteId, slug, 'active'),
    /** `force` deactivates a plugin that active plugins require (they stay active, with an unmet requirement). */
    deactivate: (siteId: string, slug: string, options: { force?: boolean } = {}) =>
      setStatus(siteId, slug, 'inactive', options),

    remove(siteId: string, slug: string, options: { force?: boolean } = {}): Promise<void> {
      return access.operate(siteId, async (site) => {
        const plugin = await find(site, slug);
        if (plugin.status !== 'inactive')
          throw pluginsProblems.active.create(`${slug} is ${plugin.status}; deactivate it before deleting it`, {
            slug,
          });
        const checked = await site.connector.changePluginStatus('delete', plugin.file, options).catch(rethrowOperation);
        if (checked) {
          refuseUnlessDone(checked, plugin);
          return;
        }
        const answer = await site.session
          .call('DELETE', restPath(plugin), { schema: DeletedPluginSchema })
          .catch(rethrowOperation);
        if (!answer.deleted)
          throw pluginsProblems.operationFailed.create(`${site.site.url} did not delete ${slug}`, { slug });
      });
    },
  };
}

/** A refusal under the plugin dependency rules, as the problem that names the plugins involved. */
function refuseUnlessDone(
  answer: PluginStatusAnswer,
  plugin: Plugin,
): asserts answer is PluginStatusAnswer & { result: 'done' } {
  if (answer.result === 'done') return;
  const names = answer.slugs.join(', ');
  if (answer.reason === 'dependencies-unmet')
    throw pluginsProblems.dependenciesUnmet.create(
      `${plugin.slug} requires ${names}, missing or inactive on the site`,
      {
        slug: plugin.slug,
        missing: answer.slugs,
      },
    );
  throw pluginsProblems.requiredBy.create(
    `${plugin.slug} is required by the active plugins ${names}; send force=true to go ahead anyway`,
    { slug: plugin.slug, requiredBy: answer.slugs },
  );
}

/** The plugin routes' own error codes; rethrowSiteOperation adds the ones plugins and themes share. */
function rethrowOperation(error: unknown): never {
  return rethrowSiteOperation(error, {
    sitewarden_plugin_not_found: (error) => pluginsProblems.notFound.create(error.detail, error.extensions),
    rest_cannot_delete_active_plugin: (error) => pluginsProblems.active.create(error.detail, error.extensions),
    sitewarden_plugin_active: (error) => pluginsProblems.active.create(error.detail, error.extensions),
    sitewarden_activation_failed: (error) => pluginsProblems.operationFailed.create(error.detail, error.extensions),
    // WordPress 6.5+ itself, when the connector predates the dependency routes (it names plugins, not slugs).
    plugin_missing_dependencies: (error) => pluginsProblems.dependenciesUnmet.create(error.detail, error.extensions),
  });
}

export type PluginsService = ReturnType<typeof createPluginsService>;
