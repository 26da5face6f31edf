import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';

const base = {
  SITEWARDEN_TARGETS: 'offsite',
  SITEWARDEN_TARGET_OFFSITE_ENDPOINT: 'https://s3.eu-central-1.amazonaws.com',
  SITEWARDEN_TARGET_OFFSITE_REGION: 'eu-central-1',
  SITEWARDEN_TARGET_OFFSITE_BUCKET: 'acme',
  SITEWARDEN_TARGET_OFFSITE_PASSPHRASE: 'twelve chars or more',
};

describe('offsite target configuration', () => {
  it('has no offsite target unless SITEWARDEN_TARGETS names one', () => {
    expect(loadConfig({}).backups.offsite).toEqual({ targets: [], defaultTargets: ['local'] });
  });

  it('reads a target from SITEWARDEN_TARGET_<NAME>_*, and backs every site up to it by default', () => {
    const { offsite } = loadConfig(base).backups;
    expect(offsite).toEqual({
      defaultTargets: ['local', 'offsite'],
      targets: [
        {
          name: 'offsite',
          type: 's3',
          passphrase: 'twelve chars or more',
          s3: {
            endpoint: 'https://s3.eu-central-1.amazonaws.com',
            region: 'eu-central-1',
            bucket: 'acme',
            prefix: 'sitewarden/',
            forcePathStyle: false,
            credentials: undefined,
            partBytes: 9 * 1024 * 1024,
            uploadBufferBytes: 18 * 1024 * 1024,
            maxAttempts: 5,
          },
        },
      ],
    });
    const withKeys = loadConfig({
      ...base,
      SITEWARDEN_TARGET_OFFSITE_ACCESS_KEY_ID: 'id',
      SITEWARDEN_TARGET_OFFSITE_SECRET_ACCESS_KEY: 'secret',
      SITEWARDEN_TARGET_OFFSITE_PATH_STYLE: 'on',
      SITEWARDEN_TARGET_OFFSITE_PREFIX: 'agency',
    }).backups.offsite!.targets[0];
    expect(withKeys).toMatchObject({
      s3: { credentials: { accessKeyId: 'id', secretAccessKey: 'secret' }, forcePathStyle: true, prefix: 'agency/' },
    });
  });

  it('refuses what cannot work, naming the variable', () => {
    const refused = (env: Record<string, string>) => () => loadConfig({ ...base, ...env });
    expect(refused({ SITEWARDEN_TARGET_OFFSITE_BUCKET: '' })).toThrow(/SITEWARDEN_TARGET_OFFSITE_BUCKET is required/);
    expect(refused({ SITEWARDEN_TARGET_OFFSITE_PASSPHRASE: 'short' })).toThrow(/PASSPHRASE.*at least 12/);
    expect(refused({ SITEWARDEN_TARGET_OFFSITE_ACCESS_KEY_ID: 'id' })).toThrow(/go together/);
    expect(refused({ SITEWARDEN_TARGET_OFFSITE_ENDPOINT: 'ftp://x' })).toThrow(/must be an http\(s\) URL/);
    expect(refused({ SITEWARDEN_BACKUP_TARGETS: 'local,elsewhere' })).toThrow(/"elsewhere" is neither/);
    expect(refused({ SITEWARDEN_BACKUP_TARGETS: 'offsite' })).toThrow(/must include "local"/);
    expect(refused({ SITEWARDEN_TARGETS: 'local' })).toThrow(/not a target name/);
  });
});
