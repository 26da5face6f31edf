import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';

/**
 * A pass-through that hashes (SHA-256) and counts the bytes flowing through it, for a pipeline that learns or
 * checks a content's hash while the bytes go on to where they are stored: `digest()` once the pipeline ended.
 */
export function hashingTap() {
  const hasher = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hasher.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return {
    tap,
    /** The bytes that went through so far. */
    get size() {
      return size;
    },
    /** The content's hash, hex; once, after the last byte. */
    digest: () => hasher.digest('hex'),
  };
}
