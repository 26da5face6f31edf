import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { startS3Server, type S3TestServer } from '../support/s3-server.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { NO_INLINE_CODE, signIn, withoutOwnStylesheet } from './signed-in.js';

let s3: S3TestServer;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(async () => {
  await s3?.stop();
});
const apps: TestApp[] = [];
afterEach(() => {
  while (apps.length > 0) apps.pop()!.close();
});

function appWithTargets(targets: 'none' | 'one') {
  const t = createTestApp({
    config: {
      backups: {
        ...DEFAULT_BACKUPS_CONFIG,
        offsite: {
          targets:
            targets === 'none'
              ? []
              : [
                  {
                    name: 'offsite',
                    type: 's3',
                    passphrase: 'dashboard test passphrase',
                    s3: s3.target({ maxAttempts: 1 }),
                  },
                ],
          defaultTargets: ['local'],
        },
      },
    },
  });
  apps.push(t);
  return t;
}

describe('the Backups page', () => {
  it('says what to do without an offsite target, and sets and removes a tag’s retention', async () => {
    const t = appWithTargets('none');
    const user = await signIn(t);
    const page = await (await user.get('/backups')).text();
    expect(withoutOwnStylesheet(page)).not.toMatch(NO_INLINE_CODE);
    expect(page).toContain('No offsite target');
    expect(page).toContain('aria-current="page">Backups</a>');

    const saved = await user.post('/backups/retention', {
      tag: 'Client-A',
      keepLast: '7',
      keepDaily: '14',
      keepDays: '',
    });
    expect(saved.status).toBe(303);
    expect(await user.follow(saved)).toContain('Retention of tag client-a saved.');
    expect((await t.services.backups.retention.view()).tags).toEqual([
      expect.objectContaining({ tag: 'client-a', keepLast: 7, keepDaily: 14, keepDays: null, keepWeekly: null }),
    ]);
    const listed = await (await user.get('/backups')).text();
    expect(listed).toMatch(/href="\/\?tag=client-a">client-a<\/a>/);

    // Refused values are a message, and change nothing.
    for (const form of <Record<string, string>[]>[
      { tag: 'client-a', keepLast: '0' },
      { tag: 'client-a', keepWeekly: 'many' },
      { tag: 'not a tag!', keepLast: '3' },
    ]) {
      const refused = await user.post('/backups/retention', form);
      expect(await user.follow(refused), JSON.stringify(form)).toMatch(/class="flash error"[^>]*>\s*Nothing saved: /);
    }
    expect((await t.services.backups.retention.view()).tags[0]).toMatchObject({ keepLast: 7 });

    expect(await user.follow(await user.post('/backups/retention/client-a/delete', {}))).toContain('Nothing removed');
    await user.post('/backups/retention/client-a/delete', { confirm: 'yes' });
    expect((await t.services.backups.retention.view()).tags).toEqual([]);
  });

  it('shows a target’s state, prunes it only when confirmed, and names a target it cannot reach', async () => {
    const t = appWithTargets('one');
    const user = await signIn(t);
    const page = await (await user.get('/backups')).text();
    expect(withoutOwnStylesheet(page)).not.toMatch(NO_INLINE_CODE);
    expect(page).toContain('<h3 id="target-offsite-h">offsite</h3>');
    expect(page).toContain('action="/backups/targets/offsite/prune"');

    expect(await user.follow(await user.post('/backups/targets/offsite/prune', {}))).toContain('Nothing pruned');
    const pruned = await user.follow(await user.post('/backups/targets/offsite/prune', { confirm: 'yes' }));
    expect(pruned).toMatch(/class="flash (ok|error)"/);
    expect(await user.follow(await user.post('/backups/targets/nope/prune', { confirm: 'yes' }))).toContain(
      'there is no target nope',
    );
    const verify = await user.follow(await user.post('/backups/targets/offsite/snapshots/bkp_nope/verify', {}));
    expect(verify).toContain('there is no backup bkp_nope');
    const restore = '/backups/targets/offsite/snapshots/bkp_nope/restore';
    expect(await user.follow(await user.post(restore, { siteId: 'site_nope' }))).toContain('Nothing restored');
    expect(await user.follow(await user.post(restore, { siteId: '', confirm: 'yes' }))).toContain(
      'name the site to restore into',
    );
    expect(await user.follow(await user.post(restore, { siteId: 'site_nope', confirm: 'yes' }))).toMatch(
      /class="flash error"[^>]*>\s*no site has the id site_nope/,
    );

    await s3.pause();
    try {
      const down = await (await user.get('/backups')).text();
      expect(down).toMatch(/unreachable<\/span\s*>/);
    } finally {
      await s3.resume();
    }
  });
});
