import { describe, expect, it } from 'vitest';
import { useConnectedSite } from '../support/wordpress-state.js';

/**
 * The inventory from a real WordPress (the newest release, 6.5.5, on the test bed's MariaDB) and
 * connector 1.4.0: the database server, WordPress's time zone setting, and `Requires Plugins`.
 */
const bed = useConnectedSite({ wordpress: 'newest' });

describe('the inventory of a real WordPress 6.5', () => {
  it('holds the database server, the time zone WordPress is set to, and plugin requirements and dependents', async () => {
    await bed.site.php(`update_option( 'timezone_string', 'America/Sao_Paulo' );`);
    const installed = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/install`, {
      json: { slug: 'sitewarden-addon' },
    });
    expect(installed.status, installed.text).toBe(201);
    const demo = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/install`, {
      json: { slug: 'sitewarden-demo' },
    });
    expect(demo.status, demo.text).toBe(201);

    const synced = await bed.t.services.sync.syncNow(bed.siteId);
    expect(synced?.syncError).toBeNull();

    const server = await bed.site.php(`global $wpdb; echo $wpdb->db_server_info();`);
    const { environment } = await bed.t.services.inventories.details(bed.siteId);
    expect(server).toContain('MariaDB');
    expect(environment).toEqual({
      databaseType: 'mariadb',
      databaseVersion: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      timeZone: 'America/Sao_Paulo',
    });
    expect(server).toContain(environment!.databaseVersion!);

    const plugins = JSON.parse((await bed.t.services.inventories.read(bed.siteId))!.pluginsJson);
    expect(plugins).toContainEqual(
      expect.objectContaining({
        slug: 'sitewarden-addon',
        requires: ['sitewarden-demo', 'sitewarden-extra'],
        requiredBy: [],
      }),
    );
    expect(plugins).toContainEqual(
      expect.objectContaining({ slug: 'sitewarden-demo', requires: [], requiredBy: ['sitewarden-addon'] }),
    );
  });

  it('reads gmt_offset when WordPress is set to a UTC offset instead of a city', async () => {
    await bed.site.php(`update_option( 'timezone_string', '' ); update_option( 'gmt_offset', -3.5 );`);
    await bed.t.services.sync.syncNow(bed.siteId);
    expect((await bed.t.services.inventories.details(bed.siteId)).environment?.timeZone).toBe('UTC-03:30');
  });
});
