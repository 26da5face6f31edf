import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** Plaintext per frame: small enough that a frame is authenticated before its bytes go on, large enough that tags cost 0.02 %. */
export const FRAME_BYTES = 64 * 1024;
const TAG_BYTES = 16;
const SALT_BYTES = 32;
const MAGIC = Buffer.from('SWS1');
const SEALED_HEADER_BYTES = MAGIC.length + SALT_BYTES;

/**
 * Raised when sealed bytes are not what was sealed under this name with this key: a wrong
 * key, a flipped bit, frames cut off, reordered or taken from another object.
 */
export class SealBroken extends Error {
  override name = 'SealBroken';
}

/**
 * Each object gets its own key, HKDF of the data key and a random salt in its header, so
 * nonces (the frame counter) never repeat under one key however many objects the repository holds.
 */
function objectKey(dataKey: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', dataKey, salt, 'sitewarden object v1', 32));
}

function nonce(counter: number): Buffer {
  const bytes = Buffer.alloc(12);
  bytes.writeUIntBE(counter, 6, 6);
  return bytes;
}

/** The object's name, the frame's position and whether it is the last: a frame moved, swapped or cut off fails its tag. */
function frameData(name: string, counter: number, final: boolean): Buffer {
  return Buffer.concat([Buffer.from(name, 'utf8'), nonce(counter), Buffer.from([final ? 1 : 0])]);
}

/** What seals one object frame by frame: its header, then each frame's ciphertext and tag. */
export interface Sealer {
  /** `SWS1` and the object's salt: the first bytes of the sealed object. */
  readonly header: Buffer;
  /** Seals the next frame (at most FRAME_BYTES; only the last may be shorter); `final` flags the last one. */
  seal(plain: Buffer, final: boolean): [ciphertext: Buffer, tag: Buffer];
}

/**
 * AES-256-GCM in frames (the STREAM construction): `SWS1`, a 32-byte salt, then frames of
 * FRAME_BYTES of plaintext plus a 16-byte tag, the last one flagged. The nonce and the frame's
 * associated data are written into buffers kept for the object (the cipher copies them).
 */
export function createSealer(dataKey: Buffer, name: string): Sealer {
  const salt = randomBytes(SALT_BYTES);
  const key = objectKey(dataKey, salt);
  const aad = frameData(name, 0, false);
  const iv = Buffer.alloc(12);
  let counter = 0;
  return {
    header: Buffer.concat([MAGIC, salt]),
    seal(plain, final) {
      iv.writeUIntBE(counter, 6, 6);
      iv.copy(aad, aad.length - 13);
      aad[aad.length - 1] = final ? 1 : 0;
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(aad);
      counter++;
      const sealed = cipher.update(plain);
      cipher.final();
      return [sealed, cipher.getAuthTag()];
    },
  };
}

/**
 * A stream of createSealer's frames, for content whose length is not known ahead: streaming and
 * bounded, one frame is held at a time, never the object.
 */
export function sealStream(dataKey: Buffer, name: string): Transform {
  const sealer = createSealer(dataKey, name);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let headerSent = false;
  // A frame's ciphertext and tag go on as they come: no copy to join them (the upload copies them into its part once).
  const seal = (stream: Transform, plain: Buffer, final: boolean): void => {
    const [sealed, tag] = sealer.seal(plain, final);
    if (sealed.length > 0) stream.push(sealed);
    stream.push(tag);
  };
  const header = (stream: Transform) => {
    if (!headerSent) stream.push(sealer.header);
    headerSent = true;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      header(this);
      let offset = 0;
      // A full frame is sealed only once more bytes follow: the last frame must know it is the last. Frames
      // within a chunk are sealed from it as they are; only one spanning two chunks is joined.
      while (pendingBytes + chunk.length - offset > FRAME_BYTES) {
        const end = offset + FRAME_BYTES - pendingBytes;
        const frame =
          pendingBytes === 0 ? chunk.subarray(offset, end) : Buffer.concat([...pending, chunk.subarray(offset, end)]);
        seal(this, frame, false);
        pending = [];
        pendingBytes = 0;
        offset = end;
      }
      if (offset < chunk.length) {
        pending.push(chunk.subarray(offset));
        pendingBytes += chunk.length - offset;
      }
      done();
    },
    flush(done: TransformCallback) {
      header(this);
      seal(this, pending.length === 1 ? pending[0]! : Buffer.concat(pending), true);
      done();
    },
  });
}

/** The length sealStream makes of `plainBytes`: the header, the bytes, a tag per frame (an empty object is one empty frame). */
export function sealedLength(plainBytes: number): number {
  return SEALED_HEADER_BYTES + plainBytes + TAG_BYTES * Math.max(1, Math.ceil(plainBytes / FRAME_BYTES));
}

/** Opens what sealStream sealed under `name`; any bytes that were not sealed so fail with SealBroken, before they are passed on. */
export function openStream(dataKey: Buffer, name: string): Transform {
  let key: Buffer | null = null;
  let counter = 0;
  let buffered: Buffer = Buffer.alloc(0);
  let finished = false;
  const open = (frame: Buffer, final: boolean): Buffer => {
    if (frame.length < TAG_BYTES) throw new SealBroken(`object ${name} is cut off`);
    const decipher = createDecipheriv('aes-256-gcm', key!, nonce(counter));
    decipher.setAAD(frameData(name, counter, final));
    decipher.setAuthTag(frame.subarray(frame.length - TAG_BYTES));
    counter++;
    try {
      return Buffer.concat([decipher.update(frame.subarray(0, frame.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SealBroken(
        `object ${name} fails authentication at frame ${counter - 1}: altered, cut off, or sealed with another key`,
      );
    }
  };
  const sealedFrame = FRAME_BYTES + TAG_BYTES;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      try {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
        if (!key) {
          if (buffered.length < SEALED_HEADER_BYTES) return done();
          if (!buffered.subarray(0, MAGIC.length).equals(MAGIC))
            throw new SealBroken(`object ${name} is not a sealed Sitewarden object`);
          key = objectKey(dataKey, buffered.subarray(MAGIC.length, SEALED_HEADER_BYTES));
          buffered = buffered.subarray(SEALED_HEADER_BYTES);
        }
        // A full frame is opened only once more bytes follow it: otherwise it may be the (flagged) last one.
        while (buffered.length > sealedFrame) {
          this.push(open(buffered.subarray(0, sealedFrame), false));
          buffered = buffered.subarray(sealedFrame);
        }
        done();
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done: TransformCallback) {
      try {
        if (!key) throw new SealBroken(`object ${name} is cut off before its header`);
        if (finished) return done();
        finished = true;
        this.push(open(buffered, true));
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
}

/** Small values (key files, snapshots) sealed whole. */
export async function sealBuffer(dataKey: Buffer, name: string, plain: Buffer): Promise<Buffer> {
  return collect(sealStream(dataKey, name), plain);
}

export async function openBuffer(dataKey: Buffer, name: string, sealed: Buffer): Promise<Buffer> {
  return collect(openStream(dataKey, name), sealed);
}

function collect(transform: Transform, input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    transform.on('data', (chunk: Buffer) => chunks.push(chunk));
    transform.on('error', reject);
    transform.on('end', () => resolve(Buffer.concat(chunks)));
    transform.end(input);
  });
}
