import { randomBytes } from 'node:crypto';

export interface WpConfigOptions {
  dbName: string;
  dbSocket: string;
  mirrorUrl: string;
  tempDir: string;
  applicationPasswords: boolean;
}

const SALT_NAMES = [
  'AUTH_KEY',
  'SECURE_AUTH_KEY',
  'LOGGED_IN_KEY',
  'NONCE_KEY',
  'AUTH_SALT',
  'SECURE_AUTH_SALT',
  'LOGGED_IN_SALT',
  'NONCE_SALT',
];

/** PHP single-quoted string literal. */
export function phpString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/**
 * Our own wp-config.php: Debian's picks a config by Host header from /etc/wordpress,
 * which would tie every site to system files.
 */
export function renderWpConfig(options: WpConfigOptions): string {
  const define = (name: string, value: string | boolean) =>
    `define( ${phpString(name)}, ${typeof value === 'boolean' ? String(value) : phpString(value)} );`;
  return [
    '<?php',
    '// Written by the Sitewarden test bed (test/support/wordpress/wp-config.ts).',
    define('DB_NAME', options.dbName),
    define('DB_USER', 'root'),
    define('DB_PASSWORD', ''),
    // host:/path means "unix socket" to wpdb; the test MariaDB listens on nothing else.
    define('DB_HOST', `localhost:${options.dbSocket}`),
    define('DB_CHARSET', 'utf8mb4'),
    define('DB_COLLATE', ''),
    ...SALT_NAMES.map((name) => define(name, randomBytes(48).toString('base64'))),
    "$table_prefix = 'wp_';",
    // 'local' is what lets application passwords work over plain http.
    define('WP_ENVIRONMENT_TYPE', 'local'),
    define('WP_DEBUG', false),
    define('FS_METHOD', 'direct'),
    define('DISABLE_WP_CRON', true),
    define('AUTOMATIC_UPDATER_DISABLED', true),
    define('WP_AUTO_UPDATE_CORE', false),
    // Core's own guard (allows only the site's host); the test mu-plugin is the stricter one.
    define('WP_HTTP_BLOCK_EXTERNAL', true),
    define('WP_TEMP_DIR', `${options.tempDir}/`),
    define('SITEWARDEN_TEST_MIRROR', options.mirrorUrl),
    define('SITEWARDEN_TEST_APPLICATION_PASSWORDS', options.applicationPasswords),
    "if ( ! defined( 'ABSPATH' ) ) {",
    "\tdefine( 'ABSPATH', __DIR__ . '/' );",
    '}',
    "require_once ABSPATH . 'wp-settings.php';",
    '',
  ].join('\n');
}
