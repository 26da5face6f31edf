import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDirectoryBackend } from '../../../src/blobs/blob-backend.js';
import { offsiteProblems } from '../../../src/backups/offsite/offsite.errors.js';
import { openRemoteRepository, rewrapRepositoryKey } from '../../../src/backups/offsite/remote-store.js';
import { isProblem } from '../../../src/shared/errors.js';

/** `sitewarden recover rekey`: a new passphrase opens the same repository; the old one no longer does. */
describe('rotating a target’s passphrase', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-rekey-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const open = (passphrase: string) =>
    openRemoteRepository({ target: 'nas', backend: createDirectoryBackend(dir), passphrase, create: false });

  it('rewraps the repository key: the data stays readable under the new passphrase only', async () => {
    const first = await openRemoteRepository({
      target: 'nas',
      backend: createDirectoryBackend(dir),
      passphrase: 'the old passphrase',
      create: true,
    });
    const { hash } = await first.store.put(Buffer.from('sealed before the rotation'));
    await rewrapRepositoryKey({
      target: 'nas',
      backend: createDirectoryBackend(dir),
      passphrase: 'the old passphrase',
      newPassphrase: 'the new passphrase',
    });
    const rotated = await open('the new passphrase');
    expect((await rotated.store.read(hash)).toString()).toBe('sealed before the rotation');
    expect(rotated.nameOf(hash)).toBe(first.nameOf(hash));
    expect(isProblem(await open('the old passphrase').catch((e: unknown) => e), offsiteProblems.wrongPassphrase)).toBe(
      true,
    );
    // A wrong current passphrase changes nothing.
    const refused = await rewrapRepositoryKey({
      target: 'nas',
      backend: createDirectoryBackend(dir),
      passphrase: 'the old passphrase',
      newPassphrase: 'a third passphrase',
    }).catch((e: unknown) => e);
    expect(isProblem(refused, offsiteProblems.wrongPassphrase)).toBe(true);
    expect((await (await open('the new passphrase')).store.read(hash)).toString()).toBe('sealed before the rotation');
  });
});
