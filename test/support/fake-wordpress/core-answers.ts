/** The credentials the fake accepts: connect with `POST /api/sites { url, username, applicationPassword }`. */
export const FAKE_USERNAME = 'admin';
export const FAKE_APPLICATION_PASSWORD = 'abcd efgh ijkl mnop qrst uvwx';
const FAKE_PASSWORD_UUID = '6f4b1b4e-5d7e-4c1a-9a57-3d2f0c6b8e21';

const CAPABILITIES = [
  'activate_plugins',
  'install_plugins',
  'update_plugins',
  'delete_plugins',
  'switch_themes',
  'update_themes',
  'delete_themes',
  'manage_options',
];

export const fakePlugin = (slug: string, status = 'inactive') => ({
  plugin: `${slug}/${slug}`,
  status,
  name: slug,
  version: '1.0.0',
});
const fakeTheme = (stylesheet: string, status = 'inactive') => ({
  stylesheet,
  template: stylesheet,
  status,
  name: { raw: stylesheet },
  version: '1.0.0',
});

/** The REST index WordPress answers at /wp-json/, pointing application passwords at wp-admin. */
export const restIndex = (host: string) => ({
  name: 'Fake',
  home: host,
  url: host,
  namespaces: ['wp/v2', 'sitewarden/v1'],
  authentication: {
    'application-passwords': { endpoints: { authorization: `${host}/wp-admin/authorize-application.php` } },
  },
});

/**
 * Well-formed answers to every route Sitewarden reads outside backups, keyed `METHOD route`: an
 * administrator, two plugins and two themes with one update each, and connector 1.2.0 with every feature.
 */
export const coreAnswers = (): Record<string, unknown> => ({
  'GET wp/v2/users/me': {
    id: 1,
    slug: FAKE_USERNAME,
    username: FAKE_USERNAME,
    name: 'Admin',
    roles: ['administrator'],
    capabilities: Object.fromEntries(CAPABILITIES.map((capability) => [capability, true])),
  },
  'GET wp/v2/users/me/application-passwords/introspect': { uuid: FAKE_PASSWORD_UUID, name: 'Sitewarden' },
  [`DELETE wp/v2/users/me/application-passwords/${FAKE_PASSWORD_UUID}`]: { deleted: true },
  'GET wp/v2/plugins': [fakePlugin('akismet', 'active'), fakePlugin('hello-dolly')],
  'POST wp/v2/plugins': fakePlugin('classic-editor'),
  'POST wp/v2/plugins/akismet/akismet': fakePlugin('akismet', 'inactive'),
  'POST wp/v2/plugins/hello-dolly/hello-dolly': fakePlugin('hello-dolly', 'active'),
  'DELETE wp/v2/plugins/hello-dolly/hello-dolly': { deleted: true, previous: fakePlugin('hello-dolly') },
  'GET wp/v2/themes': [fakeTheme('twentytwentyfour', 'active'), fakeTheme('twentytwentythree')],
  'GET sitewarden/v1/info': {
    connector: '1.2.0',
    features: ['updates', 'plugins/update', 'themes', 'backups', 'restore'],
    wordpress: '6.6',
    php: '8.3',
    multisite: false,
    filesystem: 'direct',
    capabilities: {},
  },
  'GET sitewarden/v1/updates': {
    checkedAt: new Date().toISOString(),
    plugins: { 'akismet/akismet.php': { slug: 'akismet', version: '1.0.0', newVersion: '1.1.0' } },
    themes: { twentytwentythree: { version: '1.0.0', newVersion: '1.1.0' } },
  },
  'POST sitewarden/v1/plugins/update': {
    plugin: 'akismet/akismet.php',
    previousVersion: '1.0.0',
    version: '1.1.0',
    active: true,
  },
  'POST sitewarden/v1/themes/update': {
    stylesheet: 'twentytwentythree',
    previousVersion: '1.0.0',
    version: '1.1.0',
    active: false,
  },
  'POST sitewarden/v1/themes/activate': { stylesheet: 'twentytwentythree', active: true, previous: 'twentytwentyfour' },
  'POST sitewarden/v1/themes/delete': { stylesheet: 'twentytwentythree', deleted: true },
});
