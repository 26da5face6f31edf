import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Debian's WordPress package; copied, never served or modified. */
export const WORDPRESS_SOURCE = '/usr/share/wordpress';

export const FIXTURES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures');

/** PHP files the test bed drops into (or runs against) every site. */
export const WORDPRESS_FIXTURES = resolve(FIXTURES_DIR, 'wordpress');
