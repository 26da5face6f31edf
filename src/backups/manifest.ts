import { z } from 'zod';
import { defineProblem } from '../shared/errors.js';
import { HASH_PATTERN } from './object-store.js';
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
  if (path.length === 0 || path.length > 4096 || path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.includes('\\') || path.includes('\0')) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

const hash = z.string().regex(HASH_PATTERN);

const ManifestFile = z.object({
  path: z.string().refine(isSafeRelativePath, 'unsafe path'),
  size: z.number().int().min(0),
  mtime: z.number().int(),
  sha256: hash,
  /** The content's objects in order: one for files up to CHUNK_BYTES. */
  chunks: z.array(hash),
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

export const ManifestSchema = z.object({
  format: z.literal(1),
  siteUrl: z.string(),
  createdAt: z.string(),
  /** When listing the files began: later backups trust size and mtime only for files older than this. */
  listedAt: z.string().optional(),
  files: z.array(ManifestFile),
  tables: z.array(ManifestTable),
});

export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestFileEntry = z.infer<typeof ManifestFile>;
export type ManifestTableEntry = z.infer<typeof ManifestTable>;

/** Reads a manifest without trusting it: a path escaping the root refuses the whole manifest. */
export function parseManifest(content: Buffer | string): Manifest {
  const parsed = ManifestSchema.safeParse(JSON.parse(content.toString()));
  if (!parsed.success) {
    const unsafe = parsed.error.issues.find((issue) => issue.message === 'unsafe path');
    if (unsafe) throw manifestProblems.unsafePath.create(`the backup manifest holds an unsafe path at ${unsafe.path.join('.')}; nothing was restored`);
    throw manifestProblems.malformed.create(`the backup manifest is malformed at ${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Every object a manifest references (itself not included). */
export function referencedObjects(manifest: Manifest): Set<string> {
  const objects = new Set<string>();
  for (const file of manifest.files) for (const chunk of file.chunks) objects.add(chunk);
  for (const table of manifest.tables) for (const batch of table.batches) objects.add(batch);
  return objects;
}
