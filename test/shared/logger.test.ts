import { describe, expect, it } from 'vitest';
import { censorSecrets } from '../../src/shared/logger.js';
import { createCapturedLogger } from '../support/log-capture.js';

describe('secrets in log lines', () => {
  it('censors every secret key down to two levels below the line, in objects and arrays', () => {
    const { logger, records, raw } = createCapturedLogger();
    logger.info(
      {
        password: 'p-top',
        applicationPassword: 'abcd efgh ijkl mnop',
        site: { id: 'site_1', token: 't-nested', url: 'https://example.test' },
        req: { method: 'GET', headers: { authorization: 'Bearer t-deep', accept: 'application/json' } },
        attempts: [{ authorization: 'Basic in-array' }, { slug: 'akismet' }],
        count: 3,
      },
      'something happened',
    );
    const [line] = records();
    expect(line).toMatchObject({
      password: '[redacted]',
      applicationPassword: '[redacted]',
      site: { id: 'site_1', token: '[redacted]', url: 'https://example.test' },
      req: { method: 'GET', headers: { authorization: '[redacted]', accept: 'application/json' } },
      attempts: [{ authorization: '[redacted]' }, { slug: 'akismet' }],
      count: 3,
      msg: 'something happened',
    });
    for (const secret of ['p-top', 'abcd efgh', 't-nested', 't-deep', 'in-array']) expect(raw()).not.toContain(secret);
  });

  it('copies only what it censors: the logged object is never changed, one without secrets passes as it is', () => {
    const logged = { site: { token: 'secret' }, other: { slug: 'akismet' } };
    const censored = censorSecrets(logged);
    expect(censored).toEqual({ site: { token: '[redacted]' }, other: { slug: 'akismet' } });
    expect(logged.site.token).toBe('secret');
    expect(censored.other).toBe(logged.other);
    const clean = { event: 'update.applied', siteId: 'site_1', versions: { from: '1.0.0', to: '1.1.0' } };
    expect(censorSecrets(clean)).toBe(clean);
  });

  it('leaves keys deeper than two levels, class instances and absent values alone', () => {
    const error = Object.assign(new Error('boom'), { detail: 'x' });
    const logged = { a: { b: { c: { token: 'too deep' } } }, err: error, token: undefined, password: null };
    const censored = censorSecrets(logged);
    expect(censored).toBe(logged);
  });
});
