import { basename, dirname } from 'node:path';
import type { CoreReleases } from './core-releases.js';
import type { LanguagePack } from './language-packs.js';
import { compareVersions, newestVersion, type Catalog, type DirectoryPackage, type PackageType } from './catalog.js';

/**
 * The JSON api.wordpress.org answers with, reduced to the fields WordPress 6.1
 * core reads (plugins_api, themes_api, wp_update_plugins/themes, the upgraders)
 * plus the ones a dashboard would show.
 */
export function createDirectoryResponses(deps: {
  catalog: Catalog;
  coreReleases: CoreReleases;
  languagePacks: LanguagePack[];
  baseUrl: string;
}) {
  const { catalog, coreReleases, languagePacks, baseUrl } = deps;
  const downloadLink = (pkg: DirectoryPackage) => `${baseUrl}/${pkg.type}/${pkg.slug}.${pkg.version}.zip`;
  const infoUrl = (pkg: DirectoryPackage) => `${baseUrl}/${pkg.type}s/${pkg.slug}/`;
  const versions = (type: PackageType, slug: string) =>
    Object.fromEntries((catalog[type].get(slug) ?? []).map((pkg) => [pkg.version, downloadLink(pkg)]));

  function pluginInformation(pkg: DirectoryPackage) {
    const h = pkg.headers;
    return {
      name: h['Plugin Name'],
      slug: pkg.slug,
      version: pkg.version,
      author: h['Author'] ?? '',
      author_profile: '',
      requires: h['Requires at least'] ?? false,
      tested: '6.1',
      requires_php: h['Requires PHP'] ?? false,
      rating: 100,
      ratings: { 5: 0, 4: 0, 3: 0, 2: 0, 1: 0 },
      num_ratings: 0,
      active_installs: 0,
      downloaded: 0,
      last_updated: '2024-01-01 12:00am GMT',
      added: '2024-01-01',
      homepage: h['Plugin URI'] ?? infoUrl(pkg),
      short_description: h['Description'] ?? '',
      sections: { description: h['Description'] ?? '', changelog: `<h4>${pkg.version}</h4>` },
      download_link: downloadLink(pkg),
      tags: {},
      versions: versions('plugin', pkg.slug),
      donate_link: '',
      banners: [],
      icons: {},
      // The REST plugins controller maps over this unconditionally.
      language_packs: [],
    };
  }

  function themeInformation(pkg: DirectoryPackage) {
    const h = pkg.headers;
    return {
      name: h['Theme Name'],
      slug: pkg.slug,
      version: pkg.version,
      preview_url: infoUrl(pkg),
      author: { user_nicename: 'sitewarden', display_name: h['Author'] ?? '', author: h['Author'] ?? '' },
      screenshot_url: '',
      rating: 100,
      num_ratings: 0,
      downloaded: 0,
      last_updated: '2024-01-01',
      homepage: h['Theme URI'] ?? infoUrl(pkg),
      sections: { description: h['Description'] ?? '' },
      description: h['Description'] ?? '',
      download_link: downloadLink(pkg),
      tags: {},
      versions: versions('theme', pkg.slug),
      requires: h['Requires at least'] ?? false,
      requires_php: h['Requires PHP'] ?? false,
    };
  }

  /** plugins/info/1.2 and themes/info/1.2; the status mirrors the real API (404 + {error}). */
  function info(type: PackageType, action: string, request: URLSearchParams): { status: number; body: unknown } {
    const notFound = type === 'plugin' ? 'Plugin not found.' : 'Theme not found';
    const describe = (pkg: DirectoryPackage) => (type === 'plugin' ? pluginInformation(pkg) : themeInformation(pkg));
    if (action === `${type}_information`) {
      const pkg = newestVersion(catalog, type, request.get('request[slug]') ?? '');
      return pkg ? { status: 200, body: describe(pkg) } : { status: 404, body: { error: notFound } };
    }
    if (action === `query_${type}s`) {
      const search = (request.get('request[search]') ?? '').toLowerCase();
      const found = [...catalog[type].keys()]
        .filter((slug) => slug.includes(search))
        .map((slug) => describe(newestVersion(catalog, type, slug)!));
      return { status: 200, body: { info: { page: 1, pages: 1, results: found.length }, [`${type}s`]: found } };
    }
    if (action === 'hot_tags' || action === 'hot_categories' || action === 'feature_list')
      return { status: 200, body: {} };
    return { status: 400, body: { error: `Action ${action} not implemented` } };
  }

  /** plugins/update-check/1.1: `plugins` is JSON { plugins: { 'dir/file.php': headers }, active }. */
  function pluginUpdates(form: URLSearchParams) {
    const sent = parseJson(form.get('plugins')) as { plugins?: Record<string, { Version?: string }> };
    const response: Record<string, unknown> = {};
    const noUpdate: Record<string, unknown> = {};
    for (const [file, installed] of Object.entries(sent.plugins ?? {})) {
      const slug = file.includes('/') ? dirname(file) : basename(file, '.php');
      const pkg = newestVersion(catalog, 'plugin', slug);
      // Like the real API: plugins the directory does not know are in neither list.
      if (!pkg) continue;
      const offer = {
        id: `w.org/plugins/${slug}`,
        slug,
        plugin: file,
        new_version: pkg.version,
        url: infoUrl(pkg),
        package: downloadLink(pkg),
        icons: {},
        banners: {},
        banners_rtl: [],
        requires: pkg.headers['Requires at least'] ?? '',
        tested: '6.1',
        requires_php: pkg.headers['Requires PHP'] ?? '',
      };
      const target = compareVersions(pkg.version, installed.Version ?? '0') > 0 ? response : noUpdate;
      target[file] = offer;
    }
    return {
      plugins: response,
      no_update: noUpdate,
      translations: pluginTranslations(form, Object.keys(sent.plugins ?? {})),
    };
  }

  /**
   * Language packs for the locales the site asked for (`locale`, its installed languages), for
   * installed plugins, when the site has none or an older one (`translations`: its .po headers).
   */
  function pluginTranslations(form: URLSearchParams, files: string[]) {
    const locales = parseJson(form.get('locale')) as string[];
    const installed = parseJson(form.get('translations')) as Record<
      string,
      Record<string, { 'PO-Revision-Date'?: string }>
    >;
    const slugs = new Set(files.map((file) => (file.includes('/') ? dirname(file) : basename(file, '.php'))));
    return languagePacks
      .filter((pack) => slugs.has(pack.slug) && Array.isArray(locales) && locales.includes(pack.language))
      .filter((pack) => {
        const revision = installed[pack.slug]?.[pack.language]?.['PO-Revision-Date'];
        return !revision || Date.parse(revision) < Date.parse(`${pack.updated}Z`);
      })
      .map((pack) => ({
        type: pack.type,
        slug: pack.slug,
        language: pack.language,
        version: pack.version,
        updated: pack.updated,
        package: `${baseUrl}/translation/${pack.type}/${pack.slug}/${pack.version}/${pack.language}.zip`,
        autoupdate: true,
      }));
  }

  /** themes/update-check/1.1: `themes` is JSON { active, themes: { stylesheet: { Version, ... } } }. */
  function themeUpdates(form: URLSearchParams) {
    const sent = parseJson(form.get('themes')) as { themes?: Record<string, { Version?: string }> };
    const response: Record<string, unknown> = {};
    const noUpdate: Record<string, unknown> = {};
    for (const [slug, installed] of Object.entries(sent.themes ?? {})) {
      const pkg = newestVersion(catalog, 'theme', slug);
      if (!pkg) continue;
      const offer = {
        theme: slug,
        new_version: pkg.version,
        url: infoUrl(pkg),
        package: downloadLink(pkg),
        requires: pkg.headers['Requires at least'] ?? false,
        requires_php: pkg.headers['Requires PHP'] ?? false,
      };
      const target = compareVersions(pkg.version, installed.Version ?? '0') > 0 ? response : noUpdate;
      target[slug] = offer;
    }
    return { themes: response, no_update: noUpdate, translations: [] };
  }

  /**
   * core/version-check/1.7: "you are on the latest version", whatever that is, unless the site
   * asked for core offers (the test mu-plugin adds `offer_core=1` when a test turned them on):
   * then every newer release the mirror has, newest first, as the real API lists upgrades.
   */
  function coreVersionCheck(query: URLSearchParams) {
    const version = query.get('version') ?? '0';
    const newer = query.get('offer_core') === '1' ? coreReleases.newerThan(version) : [];
    if (newer.length > 0) {
      const offers = newer.map((release) => {
        const zip = `${baseUrl}/core/wordpress-${release}.zip`;
        return {
          response: 'upgrade',
          download: zip,
          locale: query.get('locale') ?? 'en_US',
          packages: { full: zip, no_content: '', new_bundled: '', partial: false, rollback: false },
          current: release,
          version: release,
          php_version: '7.0.0',
          mysql_version: '5.5.5',
          new_bundled: release.split('.').slice(0, 2).join('.'),
          partial_version: false,
        };
      });
      return { offers, translations: [] };
    }
    const offer = {
      response: 'latest',
      download: '',
      locale: query.get('locale') ?? 'en_US',
      packages: { full: '', no_content: '', new_bundled: '', partial: false, rollback: false },
      current: version,
      version,
      php_version: '5.6.20',
      mysql_version: '5.0',
      new_bundled: version.split('.').slice(0, 2).join('.'),
      partial_version: false,
    };
    return { offers: [offer], translations: [] };
  }

  return { info, pluginUpdates, themeUpdates, coreVersionCheck };
}

function parseJson(text: string | null): unknown {
  try {
    return JSON.parse(text ?? '{}') ?? {};
  } catch {
    return {};
  }
}
