import { z } from 'zod';
import { defineProblem } from '../shared/errors.js';
import { HASH_PATTERN, type ObjectStore } from './object-store.js';
import { isLegalIdentifier, TableSchema } from './sql-schema.js';

export const manifestProblems = {
  unsafePath: defineProblem('backup-unsafe-path', 422, 'The backup holds a path outside the WordPress root'),
  malformed: defineProblem('backup-manifest-malformed', 422, 'The backup manifest is malformed'),
};

/** Files larger than this travel and are stored in chunks of this size. */
export const CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * A path relative to the WordPress root that cannot lead out of it: no absolute path, no
 * `..` or `.` segment, no empty segment, no backslash or NUL (no zip-slip).
 */
export function isSafeRelativePath(path: string): boolean {
  if (
    path.length === 0 ||
    path.length > 4096 ||
    path.startsWith('/') ||
    /^[A-Za-z]:/.test(path) ||
    path.includes('\\') ||
    path.includes('\0')
  )
    return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

const hash = z.string().regex(HASH_PATTERN);
/** A file's content as its objects' hashes, in order (a manifest entry's `chunks`; the backup scratch file's too). */
export const ChunkList = z.array(hash);

const ManifestFile = z.object({
  path: z.string().refine(isSafeRelativePath, 'unsafe path'),
  size: z.number().int().min(0),
  mtime: z.number().int(),
  sha256: hash,
  /** The content's objects in order: one for files up to CHUNK_BYTES. */
  chunks: ChunkList,
});

const ManifestTable = z
  .object({
    name: z.string().refine(isLegalIdentifier, 'not a legal table name'),
    /** The schema as parsed by the daemon; the dump's CREATE TABLE is written from it. */
    schema: TableSchema.optional(),
    /** Backups taken before schemas were parsed hold the site's own CREATE TABLE instead: parsed when used. */
    create: z.string().optional(),
    rows: z.number().int().min(0),
    primaryKey: z.array(z.string()),
    checksum: z.string().nullable(),
    /** Objects of SQL INSERT text, in order. */
    batches: z.array(hash),
  })
  .refine((table) => table.schema !== undefined || table.create !== undefined, 'a table needs its schema');

const ManifestSchema = z.object({
  format: z.literal(1),
  siteUrl: z.string(),
  createdAt: z.string(),
  /** When listing the files began: later backups trust size and mtime only for files older than this. */
  listedAt: z.string().optional(),
  files: z.array(ManifestFile),
  tables: z.array(ManifestTable),
});

/**
 * Format 2 keeps the file entries out of the manifest object: they live, in path order, in
 * NDJSON objects of at most FILES_PER_PART entries (`fileParts`), so neither writing nor reading
 * a backup of a large site holds every entry at once.
 */
const ManifestV2Schema = ManifestSchema.omit({ format: true, files: true }).extend({
  format: z.literal(2),
  fileCount: z.number().int().min(0),
  fileParts: z.array(hash),
});

export const FILES_PER_PART = 2000;

export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestFileEntry = z.infer<typeof ManifestFile>;
export type ManifestTableEntry = z.infer<typeof ManifestTable>;
export type ManifestHeader = Omit<Manifest, 'format' | 'files'> & { format: 1 | 2 };

/** A stored manifest whose file entries are read as they are needed. */
export interface OpenedManifest extends ManifestHeader {
  /** The objects holding file entries (format 2); none for format 1. */
  fileParts: string[];
  files(): AsyncIterable<ManifestFileEntry>;
}

function refuse(error: z.ZodError): never {
  const unsafe = error.issues.find((issue) => issue.message === 'unsafe path');
  if (unsafe)
    throw manifestProblems.unsafePath.create(
      `the backup manifest holds an unsafe path at ${unsafe.path.join('.')}; nothing was restored`,
    );
  throw manifestProblems.malformed.create(
    `the backup manifest is malformed at ${error.issues[0]?.path.join('.') ?? ''}: ${error.issues[0]?.message ?? 'invalid'}`,
  );
}

/** Reads a format 1 manifest without trusting it: a path escaping the root refuses the whole manifest. */
export function parseManifest(content: Buffer | string): Manifest {
  return manifestOf(JSON.parse(content.toString()));
}

function manifestOf(raw: unknown): Manifest {
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) refuse(parsed.error);
  return parsed.data;
}

/** Only what tells format 2 from format 1 (which has no `format: 2`). */
const FormatTwo = z.object({ format: z.literal(2) });

const isHash = (value: unknown) => typeof value === 'string' && HASH_PATTERN.test(value);

/**
 * An entry exactly as writeManifest writes it, checked in place: zod would build a second object
 * (and more) per entry, and restore and download parse every part of a large site's manifests.
 * Anything else goes through zod, which refuses it with its reason.
 */
function writtenEntry(value: unknown): ManifestFileEntry | null {
  if (typeof value !== 'object' || value === null || Object.keys(value).length !== 5) return null;
  const { path, size, mtime, sha256, chunks } = value as Record<string, unknown>;
  const valid =
    typeof path === 'string' &&
    isSafeRelativePath(path) &&
    Number.isSafeInteger(size) &&
    (size as number) >= 0 &&
    Number.isSafeInteger(mtime) &&
    isHash(sha256) &&
    Array.isArray(chunks) &&
    chunks.every(isHash);
  return valid ? (value as ManifestFileEntry) : null;
}

/** One NDJSON object of file entries, each checked like a format 1 entry. */
function parseFilePart(content: Buffer): ManifestFileEntry[] {
  const entries: ManifestFileEntry[] = [];
  for (const line of content.toString('utf8').split('\n')) {
    if (line === '') continue;
    const raw: unknown = JSON.parse(line);
    const entry = writtenEntry(raw);
    if (entry) {
      entries.push(entry);
      continue;
    }
    const parsed = ManifestFile.safeParse(raw);
    if (!parsed.success) refuse(parsed.error);
    entries.push(parsed.data);
  }
  return entries;
}

/** The order of paths in listings and manifests: by their UTF-8 bytes (SQLite's TEXT order, the connector's). */
const comparePaths = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Opens a manifest; its file entries come in strictly increasing path order, which restore and
 * download rely on to walk two manifests side by side without holding either: format 2 is
 * written so (a part out of order refuses the manifest), format 1 (held whole anyway) is sorted
 * here, a repeated path keeping its last entry.
 */
export async function openManifest(store: ObjectStore, manifestHash: string): Promise<OpenedManifest> {
  const raw: unknown = JSON.parse((await store.read(manifestHash)).toString());
  if (!FormatTwo.safeParse(raw).success) {
    const { files: listed, ...header } = manifestOf(raw);
    const entries = [...new Map(listed.map((file) => [file.path, file])).values()].sort((a, b) =>
      comparePaths(a.path, b.path),
    );
    return {
      ...header,
      fileParts: [],
      async *files() {
        yield* entries;
      },
    };
  }
  const parsed = ManifestV2Schema.safeParse(raw);
  if (!parsed.success) refuse(parsed.error);
  const { fileParts, fileCount: _count, ...header } = parsed.data;
  return {
    ...header,
    fileParts,
    async *files() {
      let last: string | null = null;
      for (const part of fileParts) {
        for (const file of parseFilePart(await store.read(part))) {
          if (last !== null && comparePaths(last, file.path) >= 0)
            throw manifestProblems.malformed.create(
              `the backup manifest lists ${JSON.stringify(file.path)} after ${JSON.stringify(last)}: paths must be in increasing order`,
            );
          last = file.path;
          yield file;
        }
      }
    },
  };
}

/**
 * Reads every file entry once, so a manifest that is malformed anywhere (an unsafe path, an
 * entry out of order) is refused before a restore or download starts rather than half-way.
 */
export async function checkManifestFiles(manifest: OpenedManifest): Promise<number> {
  let count = 0;
  for await (const file of manifest.files()) {
    if (!isSafeRelativePath(file.path))
      throw manifestProblems.unsafePath.create(`the backup holds the unsafe path ${JSON.stringify(file.path)}`);
    count++;
  }
  return count;
}

/**
 * Two manifests' file entries side by side, in path order: each path once, with its entry in
 * `left`, in `right`, or both. Holds one entry of each side at a time.
 */
export async function* pairByPath(
  left: AsyncIterable<ManifestFileEntry>,
  right: AsyncIterable<ManifestFileEntry>,
): AsyncGenerator<[ManifestFileEntry | undefined, ManifestFileEntry | undefined]> {
  const lefts = left[Symbol.asyncIterator]();
  const rights = right[Symbol.asyncIterator]();
  try {
    let a = await lefts.next();
    let b = await rights.next();
    while (!a.done || !b.done) {
      const order = a.done ? 1 : b.done ? -1 : comparePaths(a.value.path, b.value.path);
      if (order < 0) {
        yield [a.value, undefined];
        a = await lefts.next();
      } else if (order > 0) {
        yield [undefined, b.value as ManifestFileEntry];
        b = await rights.next();
      } else {
        yield [a.value as ManifestFileEntry, b.value as ManifestFileEntry];
        a = await lefts.next();
        b = await rights.next();
      }
    }
  } finally {
    await lefts.return?.();
    await rights.return?.();
  }
}

/** The whole manifest in memory, file entries included: for tests and small manifests; restore and download stream instead. */
export async function readManifest(store: ObjectStore, manifestHash: string): Promise<Manifest> {
  const { fileParts: _parts, files: entries, ...header } = await openManifest(store, manifestHash);
  const files: ManifestFileEntry[] = [];
  for await (const file of entries()) files.push(file);
  return { ...header, format: 1, files };
}

/** Writes a format 2 manifest: the entries (in path order) in parts as they come, then the manifest object. */
export async function writeManifest(
  store: ObjectStore,
  header: Omit<ManifestHeader, 'format'>,
  files: Iterable<ManifestFileEntry> | AsyncIterable<ManifestFileEntry>,
): Promise<{ hash: string; storedBytes: number }> {
  const fileParts: string[] = [];
  let fileCount = 0;
  let storedBytes = 0;
  // One buffer for every part: a new one per part lives through its store.put, long enough to reach V8's old
  // generation, where only a full collection frees it (200,000 files left ~60 MB of them at the end of a backup).
  let part = Buffer.allocUnsafe(1024 * 1024);
  let length = 0;
  let inPart = 0;
  const flush = async () => {
    if (inPart === 0) return;
    // put has read the content to its end when it resolves: the buffer is free again.
    const result = await store.put(part.subarray(0, length));
    fileParts.push(result.hash);
    storedBytes += result.storedBytes;
    length = 0;
    inPart = 0;
  };
  for await (const file of files) {
    const line = `${JSON.stringify({ path: file.path, size: file.size, mtime: file.mtime, sha256: file.sha256, chunks: file.chunks })}\n`;
    const bytes = Buffer.byteLength(line);
    if (length + bytes > part.length) {
      const larger = Buffer.allocUnsafe(Math.max(part.length * 2, length + bytes));
      part.copy(larger, 0, 0, length);
      part = larger;
    }
    length += part.write(line, length);
    fileCount++;
    if (++inPart >= FILES_PER_PART) await flush();
  }
  await flush();
  const result = await store.put(Buffer.from(JSON.stringify({ format: 2, ...header, fileCount, fileParts }), 'utf8'));
  return { hash: result.hash, storedBytes: storedBytes + result.storedBytes };
}

/** Every object a manifest references (itself not included): file parts, file chunks, table batches. */
export async function referencedObjects(store: ObjectStore, manifestHash: string): Promise<Set<string>> {
  const objects = new Set<string>();
  for await (const hash of eachReferencedObject(store, manifestHash)) objects.add(hash);
  return objects;
}

/** The objects of referencedObjects one at a time (repeats included), for walks that must not hold them all. */
export async function* eachReferencedObject(store: ObjectStore, manifestHash: string): AsyncGenerator<string> {
  const opened = await openManifest(store, manifestHash);
  yield* opened.fileParts;
  for await (const file of opened.files()) yield* file.chunks;
  for (const table of opened.tables) yield* table.batches;
}
