import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, NEWEST_RELEASE, type TestSite } from './wordpress/index.js';
import { WORDPRESS_SOURCE } from './wordpress/paths.js';

/**
 * The version matrix: the same test bed (MariaDB, mirror, network guard) runs Debian's
 * WordPress 6.1 and the newest release from @wp-playground/wordpress-builds.
 */
describe('WordPress version matrix', () => {
  let debian: TestSite;
  let newest: TestSite;

  beforeAll(async () => {
    [debian, newest] = await Promise.all([
      createTestSite({ wordpress: 'debian' }),
      createTestSite({ wordpress: 'newest' }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([debian, newest].map((site) => site?.stop()));
  });

  const versions = (site: TestSite) =>
    site.php(
      `global $wp_version, $wpdb; echo wp_json_encode( array( $wp_version, $wpdb->db_server_info(), get_class( $wpdb ) ) );`,
    );

  it('runs Debian’s 6.1 and the newest playground release, both on the run’s MariaDB', async () => {
    const [debianVersions, newestVersions] = await Promise.all([versions(debian), versions(newest)]);
    expect(JSON.parse(debianVersions)).toEqual([
      expect.stringMatching(/^6\.1\./),
      expect.stringMatching(/MariaDB/),
      'wpdb',
    ]);
    expect(JSON.parse(newestVersions)).toEqual([NEWEST_RELEASE.version, expect.stringMatching(/MariaDB/), 'wpdb']);
  });

  it('serves the REST API and knows plugin dependencies on the newest release', async () => {
    const response = await fetch(`${newest.url}/?rest_route=/`);
    expect(response.status).toBe(200);
    expect(await newest.php(`echo class_exists( 'WP_Plugin_Dependencies' ) ? 'yes' : 'no';`)).toBe('yes');
  });

  it('gives each site its own copy of core, never Debian’s files', () => {
    for (const site of [debian, newest]) {
      expect(site.root.startsWith(WORDPRESS_SOURCE)).toBe(false);
      expect(statSync(join(site.root, 'wp-includes/version.php')).isFile()).toBe(true);
    }
  });
});
