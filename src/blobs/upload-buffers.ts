/**
 * The memory an S3 target's uploads hold, one budget across all of them: an upload takes the
 * bytes of the part it is about to fill and gives them back once that part is sent. Part-sized
 * buffers are reused while uploads run (no fresh 8 MiB ArrayBuffer per part for the collector to
 * find later) and let go once the uploads have been idle a moment, so an idle daemon holds none.
 */
export interface UploadBuffers {
  /** Waits until `bytes` (at most one part) fit in the budget, first come first served, then lends a buffer of that length. */
  take(bytes: number): Promise<Buffer>;
  /** Gives back a buffer `take` lent. */
  give(buffer: Buffer): void;
  /** Bytes lent out now (a pooled part buffer counts whole). */
  readonly lent: number;
  /** The most bytes ever lent out at once. */
  readonly peak: number;
}

/**
 * Buffers of more than half a part are pooled part buffers, and count as a whole part against the
 * budget (that is what they hold); smaller ones (a photo, a thumbnail) are allocated at their length.
 */
const POOLED_ABOVE_FRACTION = 1 / 2;
const RELEASE_AFTER_IDLE_MS = 2000;

export function createUploadBuffers({
  budgetBytes,
  partBytes,
}: {
  budgetBytes: number;
  partBytes: number;
}): UploadBuffers {
  const budget = Math.max(budgetBytes, partBytes);
  const pooled = new WeakSet<ArrayBufferLike>();
  let free: Buffer[] = [];
  const waiting: { bytes: number; lend: () => void }[] = [];
  let lent = 0;
  let peak = 0;
  let release: NodeJS.Timeout | undefined;

  const costOf = (bytes: number) => (bytes > partBytes * POOLED_ABOVE_FRACTION ? partBytes : bytes);
  const lend = (bytes: number): Buffer => {
    lent += costOf(bytes);
    peak = Math.max(peak, lent);
    if (costOf(bytes) < partBytes) return Buffer.allocUnsafeSlow(bytes);
    let part = free.pop();
    if (!part) {
      part = Buffer.allocUnsafeSlow(partBytes);
      pooled.add(part.buffer);
    }
    return part.subarray(0, bytes);
  };

  return {
    get lent() {
      return lent;
    },
    get peak() {
      return peak;
    },
    take(bytes) {
      if (!Number.isInteger(bytes) || bytes < 0 || bytes > partBytes)
        return Promise.reject(new RangeError(`an upload buffer holds 0 to ${partBytes} bytes, not ${bytes}`));
      clearTimeout(release);
      if (waiting.length === 0 && lent + costOf(bytes) <= budget) return Promise.resolve(lend(bytes));
      return new Promise((resolve) => waiting.push({ bytes, lend: () => resolve(lend(bytes)) }));
    },
    give(buffer) {
      if (pooled.has(buffer.buffer)) {
        lent -= partBytes;
        free.push(Buffer.from(buffer.buffer, 0, partBytes));
      } else lent -= buffer.length;
      while (waiting.length > 0 && lent + costOf(waiting[0]!.bytes) <= budget) waiting.shift()!.lend();
      if (lent === 0) {
        clearTimeout(release);
        release = setTimeout(() => (free = []), RELEASE_AFTER_IDLE_MS).unref();
      }
    },
  };
}
