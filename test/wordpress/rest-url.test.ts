import { describe, expect, it } from 'vitest';
import { restRouteUrl } from '../../src/wordpress/rest-url.js';

describe('REST route URLs', () => {
  it('appends routes and query to a pretty-permalink API root', () => {
    expect(restRouteUrl('http://example.test/wp-json/', 'wp/v2/plugins', { context: 'edit' })).toBe(
      'http://example.test/wp-json/wp/v2/plugins?context=edit',
    );
    expect(restRouteUrl('http://example.test/blog/wp-json', '/wp/v2/users/me')).toBe(
      'http://example.test/blog/wp-json/wp/v2/users/me',
    );
  });

  it('merges routes into rest_route for sites without pretty permalinks', () => {
    expect(restRouteUrl('http://example.test/?rest_route=/', 'wp/v2/plugins', { context: 'edit', per_page: 100 })).toBe(
      'http://example.test/?rest_route=%2Fwp%2Fv2%2Fplugins&context=edit&per_page=100',
    );
  });
});
