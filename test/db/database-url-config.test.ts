import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** SITEWARDEN_DATABASE_URL (issue 34): cluster mode's database, declared with the other settings. */
describe('SITEWARDEN_DATABASE_URL', () => {
  const url = 'postgres://sitewarden:pw@127.0.0.1:5432/sitewarden';
  const key = Buffer.alloc(32, 7).toString('base64');

  it('is the cluster’s database, with the secret key every process shares', () => {
    const blobs = { SITEWARDEN_BLOB_TYPE: 'directory', SITEWARDEN_BLOB_PATH: '/srv/sitewarden-blobs' };
    expect(loadConfig({ SITEWARDEN_DATABASE_URL: url, SITEWARDEN_SECRET_KEY: key, ...blobs })).toMatchObject({
      databaseUrl: url,
      secretKey: key,
    });
  });

  it('is refused without SITEWARDEN_SECRET_KEY: a key file in one data directory is not shared', () => {
    expect(() => loadConfig({ SITEWARDEN_DATABASE_URL: url })).toThrow(
      new ConfigError(
        'invalid configuration: SITEWARDEN_SECRET_KEY: cluster mode (SITEWARDEN_DATABASE_URL) needs the key set, the same in every process; a key file in one data directory is not shared',
      ),
    );
  });

  it('empty or unset keeps the SQLite database in the data directory', () => {
    expect(loadConfig({ SITEWARDEN_DATABASE_URL: '' })).toEqual(loadConfig({}));
    expect(loadConfig({}).databaseUrl).toBeUndefined();
  });

  it('must be a PostgreSQL URL', () => {
    expect(() => loadConfig({ SITEWARDEN_DATABASE_URL: 'mysql://db.example.org/sitewarden' })).toThrow(
      'invalid configuration: SITEWARDEN_DATABASE_URL: SITEWARDEN_DATABASE_URL must be a postgres:// or postgresql:// URL',
    );
  });
});
