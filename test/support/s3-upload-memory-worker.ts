/**
 * Stores OBJECT_MB (argv[3]) of incompressible bytes as one object in an encrypted S3 repository
 * (argv[2]: the s3rver endpoint), then reads it back, and prints the RSS before and the peak RSS during both and how many parts
 * went up. Run by test/backups/offsite/s3-target.test.ts in its own process, so the figure is the
 * upload's alone, not the test runner's or s3rver's.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { createS3Backend } from '../../src/blobs/s3-backend.js';
import { openRemoteRepository } from '../../src/backups/offsite/remote-store.js';

const [endpoint, megabytes] = [process.argv[2]!, Number(process.argv[3])];

/** The same bytes every time they are asked for: AES-CTR's keystream, which gzip cannot shrink. */
function* generated(): Generator<Buffer> {
  const cipher = createCipheriv('aes-256-ctr', Buffer.alloc(32, 7), Buffer.alloc(16));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let mb = 0; mb < megabytes; mb++) yield cipher.update(zeros);
}

const expected = createHash('sha256');
for (const chunk of generated()) expected.update(chunk);
const hash = expected.digest('hex');

const backend = createS3Backend({
  endpoint,
  region: 'us-east-1',
  bucket: 'sitewarden-test',
  prefix: 'memory/',
  forcePathStyle: true,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  partBytes: 8 * 1024 * 1024,
  maxAttempts: 3,
});
const commands: Record<string, number> = {};
backend.client.middlewareStack.add(
  (next, context) => (args) => {
    commands[context.commandName ?? '?'] = (commands[context.commandName ?? '?'] ?? 0) + 1;
    return next(args);
  },
  { step: 'initialize' },
);
const repository = await openRemoteRepository({ target: 'memory', backend, passphrase: 'memory test', create: true });
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const baselineRssMb = mb(process.memoryUsage.rss());
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 20);
const stored = await repository.store.put(Readable.from(generated()), hash, { compressionLevel: 1 });
const check = createHash('sha256');
let size = 0;
for await (const chunk of repository.store.get(hash)) {
  check.update(chunk as Buffer);
  size += (chunk as Buffer).length;
}
clearInterval(sampler);
console.log(
  JSON.stringify({
    hash,
    stored,
    readBack: { size, hash: check.digest('hex') },
    baselineRssMb,
    peakRssMb: mb(peakRss),
    parts: commands.UploadPartCommand ?? 0,
    completed: commands.CompleteMultipartUploadCommand ?? 0,
  }),
);
