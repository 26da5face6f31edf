import type { BackupConnector, SiteFileEntry } from '../wordpress/connector-client.js';
import type { BackupScratch } from './backup-scratch.js';
import { backupContractProblems } from './backups.errors.js';
import { isSafeRelativePath, manifestProblems } from './manifest.js';

const FILES_PER_PAGE = 1000;
const REDECLARE_PAGE = 16;

const after = (path: string, than: string) => Buffer.compare(Buffer.from(path), Buffer.from(than)) > 0;

/**
 * Checks one listing page against the paging contract: no more entries than asked, every path
 * safe and strictly after the last one seen (so entries are never repeated and the walk always
 * advances), and a `next` cursor past the one asked with. Returns the page's last path.
 */
function checkPage(
  page: { files: SiteFileEntry[]; next: string | null },
  cursor: string,
  lastSeen: string,
  limit: number,
): string {
  if (page.files.length > limit)
    throw backupContractProblems.listingInvalid.create(
      `the site listed ${page.files.length} files in a page of at most ${limit}`,
      { cursor },
    );
  let last = lastSeen;
  for (const entry of page.files) {
    if (!isSafeRelativePath(entry.path))
      throw manifestProblems.unsafePath.create(`the site listed the unsafe path ${JSON.stringify(entry.path)}`);
    if (!after(entry.path, last))
      throw backupContractProblems.listingInvalid.create(
        `the site listed ${JSON.stringify(entry.path)} after ${JSON.stringify(last)}: paths must be strictly increasing`,
        { cursor, path: entry.path },
      );
    last = entry.path;
  }
  if (page.next !== null && !after(page.next, cursor))
    throw backupContractProblems.listingInvalid.create(
      `the site's listing cursor does not advance past ${JSON.stringify(cursor)}`,
      { cursor, next: page.next },
    );
  return last;
}

/**
 * Lists the site's files page by page into the scratch store (only one page is ever held).
 * `known` entries of the previous backup spare the site hashing files whose size and mtime did not change.
 */
export async function listFiles({
  connector,
  scratch,
  trustedBefore,
}: {
  connector: BackupConnector;
  scratch: BackupScratch;
  trustedBefore: number;
}): Promise<void> {
  let lastSeen = '';
  for (let cursor = ''; ;) {
    const known = trustedBefore > 0 ? scratch.knownAfter(cursor, trustedBefore, FILES_PER_PAGE) : [];
    const page = await connector.files(cursor, FILES_PER_PAGE, known);
    lastSeen = checkPage(page, cursor, lastSeen, FILES_PER_PAGE);
    scratch.addListed(page.files);
    if (page.next === null) return;
    cursor = page.next;
  }
}

/**
 * Asks the site again what one file is now (after its bytes did not match): lists from just
 * before the path, so any connector answers it. Null when the file is gone or unreadable now.
 */
export async function redeclareFile(connector: BackupConnector, path: string): Promise<SiteFileEntry | null> {
  const characters = Array.from(path);
  let cursor = characters.slice(0, -1).join('');
  let lastSeen = cursor;
  for (;;) {
    const page = await connector.files(cursor, REDECLARE_PAGE, []);
    lastSeen = checkPage(page, cursor, lastSeen, REDECLARE_PAGE);
    for (const entry of page.files) {
      if (entry.path === path) return entry.sha256 === null ? null : entry;
      if (after(entry.path, path)) return null;
    }
    if (page.next === null) return null;
    cursor = page.next;
  }
}
