import type { Events } from '../shared/event-bus.js';
import {
  logUpdateFailure,
  pluginFromWordPress,
  rethrowSiteOperation,
  withPluginUpdates,
  type Plugin,
} from '../inventory/index.js';
import { isAppError } from '../shared/errors.js';
import type { ConnectedSite, SiteAccess } from '../wordpress/site-access.js';
import { DeletedPluginSchema, WordPressPluginSchema } from '../wordpress/site-schemas.js';
import { pluginsProblems } from './plugins.errors.js';

/** Plugins on a real site: core REST for listing, installing, (de)activating, deleting; the connector for updates. */
export function createPluginsService({ access, events }: { access: SiteAccess; events: Events }) {
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

  const restPath = (plugin: Plugin) => `wp/v2/plugins/${plugin.file.replace(/\.php$/, '')}`;

  async function setStatus(siteId: string, slug: string, status: 'active' | 'inactive'): Promise<Plugin> {
    return access.operate(siteId, async (site) => {
      const plugin = await find(site, slug);
      if (plugin.status === 'network-active' || plugin.status === status) return plugin;
      const updated = await site.session
        .call('POST', restPath(plugin), { json: { status }, schema: WordPressPluginSchema })
        .catch(rethrowOperation);
      return { ...pluginFromWordPress(updated), update: plugin.update };
    });
  }

  return {
    list: (siteId: string) => access.read(siteId, listWithUpdates),

    install(siteId: string, slug: string, options: { activate?: boolean } = {}): Promise<Plugin> {
      return access.operate(siteId, async (site) => {
        const existing = (await site.session.listPlugins())
          .map(pluginFromWordPress)
          .find((plugin) => plugin.slug === slug);
        if (existing)
          throw pluginsProblems.alreadyInstalled.create(
            `${slug} ${existing.version} is already installed on ${site.site.url}`,
            { slug },
          );
        try {
          const installed = await site.session.call('POST', 'wp/v2/plugins', {
            json: { slug, status: options.activate ? 'active' : 'inactive' },
            schema: WordPressPluginSchema,
          });
          return pluginFromWordPress(installed);
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
    },

    update(siteId: string, slug: string): Promise<Plugin> {
      return access.operate(siteId, async (site) => {
        const plugin = await find(site, slug);
        await site.connector
          .updatePlugin(plugin.file)
          .catch(rethrowOperation)
          .catch((error: unknown) => {
            logUpdateFailure(events, 'plugin', site, plugin, error, [
              pluginsProblems.noUpdate,
              pluginsProblems.notFound,
            ]);
            throw error;
          });
        return find(site, slug);
      });
    },

    activate: (siteId: string, slug: string) => setStatus(siteId, slug, 'active'),
    deactivate: (siteId: string, slug: string) => setStatus(siteId, slug, 'inactive'),

    remove(siteId: string, slug: string): Promise<void> {
      return access.operate(siteId, async (site) => {
        const plugin = await find(site, slug);
        if (plugin.status !== 'inactive')
          throw pluginsProblems.active.create(`${slug} is ${plugin.status}; deactivate it before deleting it`, {
            slug,
          });
        const answer = await site.session
          .call('DELETE', restPath(plugin), { schema: DeletedPluginSchema })
          .catch(rethrowOperation);
        if (!answer.deleted)
          throw pluginsProblems.operationFailed.create(`${site.site.url} did not delete ${slug}`, { slug });
      });
    },
  };
}

/** The plugin routes' own error codes; rethrowSiteOperation adds the ones plugins and themes share. */
function rethrowOperation(error: unknown): never {
  return rethrowSiteOperation(error, {
    sitewarden_plugin_not_found: (error) => pluginsProblems.notFound.create(error.detail, error.extensions),
    rest_cannot_delete_active_plugin: (error) => pluginsProblems.active.create(error.detail, error.extensions),
  });
}

export type PluginsService = ReturnType<typeof createPluginsService>;
