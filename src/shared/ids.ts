import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RANDOM_DIGITS = 16;

// The random digits of the last id made for each of the latest milliseconds ids were made for: an id counts up
// from the last one of its millisecond, also when ids of another millisecond were made between them (an event's
// id, made for the instant it was emitted, between two deliveries' ids made for now).
const lastRandomOf = new Map<number, number[]>();
const MILLISECONDS_KEPT = 64;
// Random bytes drawn a few kilobytes at a time (one call to the system's generator per 256 ids, not one per id).
const pool = Buffer.alloc(4096);
let pooled = pool.length;
function randomDigits(): number[] {
  if (pooled + RANDOM_DIGITS > pool.length) {
    randomFillSync(pool);
    pooled = 0;
  }
  const digits: number[] = [];
  for (let i = 0; i < RANDOM_DIGITS; i++) digits.push(pool[pooled++]! % 32);
  return digits;
}

/**
 * Time-ordered identifiers (like monotonic ULIDs, lower-case Crockford base32) with a readable
 * prefix, e.g. `site_01hx…`. Ordering by id is ordering by creation, within a millisecond too,
 * which keeps cursors simple.
 */
export function createId(prefix: string, now: Date = new Date()): string {
  const ms = now.getTime();
  let time = ms;
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = ALPHABET[time % 32] + timePart;
    time = Math.floor(time / 32);
  }
  let random = lastRandomOf.get(ms);
  if (!random || !increment(random)) {
    random = randomDigits();
    // Room to count up: the top digit starts in the lower half.
    random[0] = random[0]! % 16;
  }
  lastRandomOf.delete(ms);
  lastRandomOf.set(ms, random);
  if (lastRandomOf.size > MILLISECONDS_KEPT) lastRandomOf.delete(lastRandomOf.keys().next().value!);
  return `${prefix}_${timePart}${random.map((digit) => ALPHABET[digit]).join('')}`;
}

/** Adds one to base-32 digits in place; false when they were all at the top. */
function increment(digits: number[]): boolean {
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i]! < 31) {
      digits[i]!++;
      return true;
    }
    digits[i] = 0;
  }
  return false;
}
