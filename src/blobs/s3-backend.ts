import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { BlobBackend } from './blob-backend.js';
import { createUploadBuffers, type UploadBuffers } from './upload-buffers.js';

export interface S3TargetConfig {
  /** The only address the SDK is given: AWS's regional endpoint, B2's, R2's, a MinIO server… */
  endpoint: string;
  region: string;
  bucket: string;
  /** Keys of this repository start with it (`sitewarden/`); several daemons can share a bucket under different prefixes. */
  prefix: string;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO, most self-hosted servers). */
  forcePathStyle: boolean;
  /** Absent: the SDK's environment / shared-profile chain, with the instance-metadata lookup switched off. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Bytes held per upload part: the memory one upload needs, whatever the object's size (≥ 5 MiB, S3's minimum part). */
  partBytes: number;
  /** Attempts per request, with the SDK's exponential backoff and jitter between them. */
  maxAttempts: number;
  /** Bytes all uploads to this target hold at once (≥ one part): parts waiting to be sent, whole small objects. */
  uploadBufferBytes?: number;
}

/** Part buffers held at once across a target's uploads unless configured: two parts of 9 MiB (targets.config.ts). */
const DEFAULT_UPLOAD_BUFFER_BYTES = 18 * 1024 * 1024;

const isMissing = (error: unknown) =>
  error instanceof S3ServiceException &&
  (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404);

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('base64');

const lengthMismatch = (key: string, declared: number | undefined, seen: number) =>
  new Error(`blob ${key}: its body is not the ${declared} bytes declared (${seen} or more)`);

/**
 * An S3-compatible bucket through the AWS SDK. Large blobs go up in parts of `partBytes`, one part
 * in memory at a time per upload, and every upload's part within one budget for the target
 * (upload-buffers.ts): a blob whose length is known and fits in a part holds just that length.
 */
export function createS3Backend(config: S3TargetConfig): BlobBackend & { client: S3Client; buffers: UploadBuffers } {
  if (!config.credentials) {
    // The SDK's last resort is the EC2 instance-metadata address (169.254.169.254): a daemon told an endpoint talks to
    // that endpoint only. Someone who wants instance roles says so with AWS_EC2_METADATA_DISABLED=false.
    process.env.AWS_EC2_METADATA_DISABLED ??= 'true';
  }
  const client = new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    credentials: config.credentials,
    maxAttempts: config.maxAttempts,
    retryMode: 'standard',
    // Content-MD5 on every body instead of the newer default CRC headers, which several S3-compatible services refuse.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  // Bodies are signed as UNSIGNED-PAYLOAD rather than hashed a second time for SigV4 (over plain HTTP the SDK
  // would SHA-256 every byte): Content-MD5 is what S3 checks the bytes against, and they are sealed (AES-GCM) anyway.
  client.middlewareStack.add(
    (next) => (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (request.headers && Buffer.isBuffer(request.body))
        request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'sitewardenUnsignedPayload' },
  );
  const buffers = createUploadBuffers({
    budgetBytes: config.uploadBufferBytes ?? DEFAULT_UPLOAD_BUFFER_BYTES,
    partBytes: config.partBytes,
  });
  const Bucket = config.bucket;
  const keyOf = (key: string) => `${config.prefix}${key}`;

  async function putWhole(Key: string, body: Buffer) {
    await client.send(
      new PutObjectCommand({ Bucket, Key, Body: body, ContentMD5: md5(body), ContentLength: body.length }),
    );
  }

  return {
    client,
    buffers,
    location: `s3://${Bucket}/${config.prefix}`,

    async put(key, body, options = {}) {
      const Key = keyOf(key);
      // The whole body in one request when it fits in a part (its length known, or seen to be short).
      const firstPart = options.bytes === undefined ? config.partBytes : Math.min(options.bytes, config.partBytes);
      let part = await buffers.take(firstPart);
      let filled = 0;
      let bytes = 0;
      let uploadId: string | undefined;
      const parts: { ETag: string; PartNumber: number }[] = [];
      const sendPart = async () => {
        const content = part.subarray(0, filled);
        uploadId ??= (await client.send(new CreateMultipartUploadCommand({ Bucket, Key }))).UploadId;
        const PartNumber = parts.length + 1;
        const { ETag } = await client.send(
          new UploadPartCommand({
            Bucket,
            Key,
            UploadId: uploadId,
            PartNumber,
            Body: content,
            ContentMD5: md5(content),
            ContentLength: content.length,
          }),
        );
        parts.push({ ETag: ETag ?? '', PartNumber });
      };
      const nextPart = async () => {
        buffers.give(part);
        filled = 0;
        const left = options.bytes === undefined ? config.partBytes : options.bytes - bytes;
        part = await buffers.take(Math.max(0, Math.min(left, config.partBytes)));
      };
      try {
        for await (const chunk of body) {
          let offset = 0;
          while (offset < chunk.length) {
            if (filled === part.length) {
              if (part.length < config.partBytes)
                throw lengthMismatch(key, options.bytes, bytes + chunk.length - offset);
              await sendPart();
              await nextPart();
              if (part.length === 0) throw lengthMismatch(key, options.bytes, bytes + chunk.length - offset);
            }
            const copied = chunk.copy(part, filled, offset);
            filled += copied;
            offset += copied;
            bytes += copied;
          }
        }
        if (options.bytes !== undefined && bytes !== options.bytes) throw lengthMismatch(key, options.bytes, bytes);
        await options.beforeCommit?.();
        if (uploadId === undefined) {
          await putWhole(Key, part.subarray(0, filled));
          return { bytes };
        }
        if (filled > 0) await sendPart();
        await client.send(
          new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
        );
        return { bytes };
      } catch (error) {
        if (uploadId !== undefined)
          await client
            .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId }))
            .catch(() => undefined);
        throw error;
      } finally {
        buffers.give(part);
      }
    },

    async get(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket, Key: keyOf(key) }));
        return answer.Body as Readable;
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },

    async size(key) {
      try {
        return (await client.send(new HeadObjectCommand({ Bucket, Key: keyOf(key) }))).ContentLength ?? 0;
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },

    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
    },

    // Version 1 listing, paged by the last key: every S3-compatible server has it (s3rver's V2 continuation tokens fail on OpenSSL 3).
    async *list(prefix) {
      let Marker: string | undefined;
      for (;;) {
        const page = await client.send(
          new ListObjectsCommand({ Bucket, Prefix: keyOf(prefix), Marker, MaxKeys: 1000 }),
        );
        const items = page.Contents ?? [];
        for (const item of items)
          if (item.Key)
            yield {
              key: item.Key.slice(config.prefix.length),
              size: item.Size ?? 0,
              modifiedAt: item.LastModified ?? new Date(0),
            };
        if (!page.IsTruncated || items.length === 0) return;
        Marker = page.NextMarker ?? items.at(-1)!.Key;
      }
    },

    async cleanUnfinished(before) {
      let removed = 0;
      try {
        let KeyMarker: string | undefined;
        let UploadIdMarker: string | undefined;
        do {
          const page = await client.send(
            new ListMultipartUploadsCommand({ Bucket, Prefix: config.prefix, KeyMarker, UploadIdMarker }),
          );
          for (const upload of page.Uploads ?? []) {
            if (!upload.Key || !upload.UploadId || (upload.Initiated && upload.Initiated >= before)) continue;
            await client.send(new AbortMultipartUploadCommand({ Bucket, Key: upload.Key, UploadId: upload.UploadId }));
            removed++;
          }
          KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
          UploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
        } while (KeyMarker);
      } catch (error) {
        // Some S3-compatible servers do not list uploads: a bucket lifecycle rule then removes them (docs/offsite-backups.md).
        if (error instanceof S3ServiceException && error.name === 'NotImplemented') return removed;
        throw error;
      }
      return removed;
    },
  };
}
