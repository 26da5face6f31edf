import { z } from 'zod';

/** The connector's backup/... and restore/... routes (connector/includes/class-sitewarden-connector-backup-routes.php). */
export interface SiteFileEntry {
  path: string;
  size: number;
  mtime: number;
  sha256: string | null;
}

const SiteTableSchema = z.union([
  /** `bytes`: the server's estimate of the table's data on disk, which sizes the backup's budget. */
  z.object({
    name: z.string(),
    create: z.string(),
    rows: z.number().int().min(0),
    primaryKey: z.array(z.string()).max(64),
    checksum: z.string().nullable(),
    bytes: z.number().int().min(0),
  }),
  /** A table the connector could not read (or that is not a plain table): the backup fails naming it. */
  z.object({ name: z.string(), error: z.string() }),
]);
export const TablesAnswer = z.object({ tables: z.array(SiteTableSchema).max(100_000) });
const RowsCursorSchema = z.union([
  z.object({ key: z.array(z.string()).min(1).max(64) }).strict(),
  z.object({ offset: z.number().int().min(0) }).strict(),
]);
export const RowsAnswer = z.object({
  sql: z.string(),
  rows: z.number().int().min(0),
  next: RowsCursorSchema.nullable(),
});
export const InsertedAnswer = z.object({ rows: z.number().int().min(0) });
export const RestoreBegun = z.object({ restoreId: z.string().regex(/^[a-z0-9]{1,64}$/) });
export const DeletionsPlanned = z.object({ planned: z.number().int().min(0) });
export const TableStaged = z.object({ table: z.string(), staged: z.literal(true) });
export const RestoreFinished = z.object({
  tables: z.number().int().min(0),
  dropped: z.number().int().min(0),
  moved: z.number().int().min(0),
  deleted: z.number().int().min(0),
});
export const RestoreAborted = z.object({ aborted: z.boolean(), completed: z.boolean().optional() });

export type SiteTable = z.infer<typeof SiteTableSchema>;
export type RowsCursor = z.infer<typeof RowsCursorSchema>;

export interface FinishedRestore {
  tables: number;
  dropped: number;
  moved: number;
  deleted: number;
}

export const FilesPage = z.object({
  files: z.array(
    z.object({
      path: z.string(),
      size: z.number().int().min(0),
      mtime: z.number().int(),
      sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .nullable(),
    }),
  ),
  next: z.string().nullable(),
});

/** A bundle's framing beyond the files' bytes: one length line (at most 20 digits and a newline) per file. */
export const BUNDLE_FRAMING_BYTES = 24;

/** The bundle framing: per file a decimal length line (negative: no content), then the bytes. */
export function parseBundle(body: Buffer, count: number): (Buffer | null)[] {
  const files: (Buffer | null)[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const newline = body.indexOf(0x0a, at);
    const length = newline < 0 ? NaN : Number(body.subarray(at, newline).toString('ascii'));
    if (!Number.isInteger(length) || newline + 1 + Math.max(length, 0) > body.length)
      throw new Error(`the site's file bundle is cut short or malformed at file ${i + 1} of ${count}`);
    at = newline + 1;
    if (length < 0) files.push(null);
    else {
      files.push(body.subarray(at, at + length));
      at += length;
    }
  }
  if (at !== body.length)
    throw new Error(`the site's file bundle holds ${body.length - at} bytes more than its ${count} files`);
  return files;
}
