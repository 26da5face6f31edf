import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Time-ordered identifiers (like ULIDs, lower-case Crockford base32) with a readable prefix,
 * e.g. `site_01hx…`. Ordering by id is ordering by creation, which keeps cursors simple.
 */
export function createId(prefix: string, now: Date = new Date()): string {
  let time = now.getTime();
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = ALPHABET[time % 32] + timePart;
    time = Math.floor(time / 32);
  }
  const random = randomBytes(16);
  let randomPart = '';
  for (const byte of random) randomPart += ALPHABET[byte % 32];
  return `${prefix}_${timePart}${randomPart.slice(0, 16)}`;
}
