import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { createAuthFailureLimiter } from '../../src/http/auth-rate-limit.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createLoggedEvents, createLogger } from '../../src/shared/logger.js';
import { createTokensRepository } from '../../src/tokens/tokens.repository.js';
import { createTokensService } from '../../src/tokens/tokens.service.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('failed authentications per client address', () => {
  it('answers a flood of bad tokens with 429s while a valid client on the same address keeps getting 200s', async () => {
    const clock = createFakeClock(new Date('2026-03-02T10:00:00Z'));
    const metrics = createMetrics({ processMetrics: false });
    // app.request() has no socket: every request comes from one address, like the flood and the valid client here.
    t = createTestApp({ clock, metrics, app: { authLimiter: createAuthFailureLimiter({ limit: 5, clock }) } });

    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const bad = await t.call('GET', '/api/sites', { token: `swt_flood-${i}` });
      statuses.push(bad.status);
      expect((await t.call('GET', '/api/sites', { token: t.readToken })).status).toBe(200);
    }
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);

    const limited = await t.call('GET', '/api/sites', { token: 'swt_flood-again' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    expect(limited.headers.get('retry-after')).toBe('60');
    expect(limited.json).toMatchObject({ type: '/problems/too-many-failed-authentications', status: 429 });
    // Without a token, or with a malformed header, it is refused the same way; a write token still writes.
    expect((await t.call('GET', '/api/sites', { token: null })).status).toBe(429);
    expect((await t.call('GET', '/api/sites', { token: null, headers: { authorization: 'Basic abc' } })).status).toBe(
      429,
    );
    expect((await t.call('POST', '/api/sites', { json: { url: 'ftp://nowhere' } })).status).toBe(400);
    // The public health check is not behind authentication at all.
    expect((await t.call('GET', '/api/health', { token: null })).status).toBe(200);

    clock.advance(45_000);
    expect((await t.call('GET', '/api/sites', { token: 'swt_flood-later' })).headers.get('retry-after')).toBe('15');
    clock.advance(15_000); // the window is over: the address starts again from zero
    expect((await t.call('GET', '/api/sites', { token: 'swt_flood-next-window' })).status).toBe(401);
    for (let i = 0; i < 4; i++) await t.call('GET', '/api/sites', { token: `swt_next-${i}` });
    expect((await t.call('GET', '/api/sites', { token: 'swt_flood-sixth' })).status).toBe(429);

    const scraped = parsePrometheusText(
      await (await t.app.request('/metrics', { headers: { authorization: `Bearer ${t.readToken}` } })).text(),
    );
    expect(sampleValue(scraped, 'sitewarden_auth_rate_limited_total')).toBe(20);
  });

  it('keeps addresses apart and forgets the oldest when it tracks too many', () => {
    const clock = createFakeClock();
    const limiter = createAuthFailureLimiter({ limit: 2, clock, maxAddresses: 3 });
    for (const address of ['10.0.0.1', '10.0.0.1', '10.0.0.2']) limiter.fail(address);
    expect(limiter.retryAfterSeconds('10.0.0.1')).toBe(60);
    expect(limiter.retryAfterSeconds('10.0.0.2')).toBe(0);
    limiter.fail('10.0.0.3');
    clock.advance(1000);
    limiter.fail('10.0.0.4'); // a fourth address: the oldest (10.0.0.1) makes room
    expect(limiter.trackedAddresses).toBe(3);
    expect(limiter.retryAfterSeconds('10.0.0.1')).toBe(0);
    clock.advance(60_000);
    limiter.fail('10.0.0.5'); // expired windows go first
    expect(limiter.trackedAddresses).toBe(1);
  });
});

describe('token checks stay cheap and exact', () => {
  it('remembers valid tokens, and forgets one revoked here or by another process (the CLI)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'sitewarden-tokens-')), 'sitewarden.db');
    const daemonDb = sqliteStateOf(openDatabase(path));
    const cliDb = sqliteStateOf(openDatabase(path));
    try {
      const clock = createFakeClock();
      const events = createLoggedEvents(createLogger({ level: 'silent' }));
      const repository = createTokensRepository(daemonDb);
      let lookups = 0;
      const counted = {
        ...repository,
        findActiveByHash: (hash: string) => (lookups++, repository.findActiveByHash(hash)),
      };
      const daemon = createTokensService({ repository: counted, clock, events });
      const cli = createTokensService({ repository: createTokensRepository(cliDb), clock, events });

      const kept = (await daemon.create('kept', 'read')).token;
      const revokedHere = (await daemon.create('revoked-here', 'read')).token;
      const revokedByCli = (await daemon.create('revoked-by-cli', 'write')).token;
      for (const token of [kept, revokedHere, revokedByCli, kept, revokedHere, revokedByCli])
        expect(await daemon.authenticate(token)).not.toBeNull();
      expect(lookups).toBe(3); // the second round came from memory

      await daemon.revoke('revoked-here');
      expect(await daemon.authenticate(revokedHere)).toBeNull();
      expect(await daemon.authenticate(revokedByCli)).not.toBeNull();

      await cli.revoke('revoked-by-cli');
      expect(await daemon.authenticate(revokedByCli)).toBeNull();
      expect(await daemon.authenticate(kept)).toMatchObject({ name: 'kept', scope: 'read' });
      expect(await daemon.authenticate('swt_unknown')).toBeNull();
    } finally {
      await cliDb.close();
      await daemonDb.close();
    }
  });
});
