import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/**
 * SITEWARDEN_DATABASE_URL (issue 34) is declared with the other settings, and refused while cluster
 * mode is not built: a daemon given it must not run on SQLite as though it had not been.
 */
describe('SITEWARDEN_DATABASE_URL', () => {
  it('is refused while cluster mode is not built', () => {
    expect(() => loadConfig({ SITEWARDEN_DATABASE_URL: 'postgres://sitewarden:pw@127.0.0.1:5432/sitewarden' })).toThrow(
      new ConfigError(
        'invalid configuration: SITEWARDEN_DATABASE_URL: cluster mode is not built yet; unset it to keep the SQLite database in the data directory',
      ),
    );
  });

  it('empty or unset keeps the SQLite database in the data directory', () => {
    expect(loadConfig({ SITEWARDEN_DATABASE_URL: '' })).toEqual(loadConfig({}));
  });

  it('must be a PostgreSQL URL', () => {
    expect(() => loadConfig({ SITEWARDEN_DATABASE_URL: 'mysql://db.example.org/sitewarden' })).toThrow(
      'invalid configuration: SITEWARDEN_DATABASE_URL: SITEWARDEN_DATABASE_URL must be a postgres:// or postgresql:// URL',
    );
  });
});
