import { Readable } from 'node:stream';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { decodeCursor, pageSchema, PaginationQuery, toPage } from '../http/pagination.js';
import { JobSchema, jobView } from '../jobs/jobs.schemas.js';
import { SiteIdPathParam } from '../sites/index.js';
import {
  BackupParams,
  BackupSchema,
  backupView,
  RestoreParams,
  RestoreSchema,
  restoreView,
  RepairQuery,
  VerifyJobSchema,
  VerifyQuery,
} from './backups.schemas.js';
import type { BackupsService } from './backups.service.js';

const tags = ['Backups'];

const routes = {
  list: createRoute({
    method: 'get',
    path: '/sites/{siteId}/backups',
    operationId: 'listBackups',
    tags,
    summary: 'Backup history of a site',
    description:
      'Newest first, with status (`queued`, `running`, `completed`, `failed` with a `reason`), progress and sizes.',
    request: { params: SiteIdPathParam, query: PaginationQuery },
    responses: {
      200: jsonContent(pageSchema(BackupSchema, 'BackupPage'), 'A page of backups'),
      ...problemResponses(400, 404),
    },
  }),
  create: createRoute({
    method: 'post',
    path: '/sites/{siteId}/backups',
    operationId: 'createBackup',
    tags,
    summary: 'Back up a site',
    description:
      'Answers 202 at once with the queued backup; the work happens in the background (poll `GET …/backups/{backupId}`). Only one backup or restore of a site runs at a time: another request meanwhile answers 409 `backup-in-progress`.',
    request: { params: SiteIdPathParam },
    responses: { 202: jsonContent(BackupSchema, 'Queued'), ...problemResponses(403, 404, 409, 422) },
  }),
  get: createRoute({
    method: 'get',
    path: '/sites/{siteId}/backups/{backupId}',
    operationId: 'getBackup',
    tags,
    summary: 'One backup',
    request: { params: BackupParams },
    responses: { 200: jsonContent(BackupSchema, 'The backup'), ...problemResponses(404) },
  }),
  verify: createRoute({
    method: 'post',
    path: '/sites/{siteId}/backups/{backupId}/verify',
    operationId: 'verifyBackup',
    tags,
    summary: 'Verify a backup',
    description:
      'Queues a verify as a job (kind `backup-verify`) and answers it (202): the job re-reads the backup’s objects from one target (`local` or an offsite one; `sample` for a random part of them) and checks each one’s authentication and content hash (the same as `sitewarden backup verify`). Follow it at `GET /api/jobs/{jobId}`: while it runs, `progress` says `filesChecked` of `files` and `tablesChecked` of `tables`, `objectsChecked` and `bytesChecked`; once `succeeded`, `progress.result` is a `BackupVerification`: `ok`, the missing and corrupt objects, and what they take away from a restore in the site’s terms (`lost`: file paths and tables). Logged as `backup.verified` or `backup.damaged`; a target that could not be read fails the job (`backup.verify-failed`). On an offsite target the corrupt objects found are marked there, and the next copy of a backup sends them again; `POST …/repair` does it now. An unknown target is 404 `backup-target-unknown`.',
    request: { params: BackupParams, query: VerifyQuery },
    responses: {
      202: jsonContent(VerifyJobSchema, 'The verify job, queued'),
      ...problemResponses(400, 403, 404),
    },
  }),
  repair: createRoute({
    method: 'post',
    path: '/sites/{siteId}/backups/{backupId}/repair',
    operationId: 'repairBackup',
    tags,
    summary: 'Repair a backup on one target',
    description:
      'Queues a repair as a job (kind `backup-repair`) and answers it (202): the job verifies the backup on `target`, sends every missing or corrupt object again from another store that holds it whole (the local store first, then the other offsite targets; each copy checked against its hash before it is written), and verifies the target again. Once `succeeded`, `progress` says `objectsResent`, `resentFrom` (per store), the `unrepairable` objects (no good copy anywhere) and `result`, the last verification. Logged as `backup.repaired` (and `backup.damaged` for what stays lost), with who asked. An unknown target is 404 `backup-target-unknown`; a backup that did not complete, 409 `backup-not-completed`.',
    request: { params: BackupParams, query: RepairQuery },
    responses: {
      202: jsonContent(JobSchema, 'The repair job, queued'),
      ...problemResponses(400, 403, 404, 409),
    },
  }),
  download: createRoute({
    method: 'get',
    path: '/sites/{siteId}/backups/{backupId}/download',
    operationId: 'downloadBackup',
    tags,
    summary: 'Download a backup as tar.gz',
    description:
      'One standard archive, so you are never locked in: the site’s files under `files/` and `database.sql`, an SQL dump (`mariadb DB < database.sql`). Streamed from the store; every object is checked against its hash as it is read.',
    request: { params: BackupParams },
    responses: {
      200: {
        description: 'The archive',
        content: { 'application/gzip': { schema: z.string().openapi({ format: 'binary' }) } },
      },
      ...problemResponses(404, 409, 502),
    },
  }),
  restore: createRoute({
    method: 'post',
    path: '/sites/{siteId}/backups/{backupId}/restore',
    operationId: 'restoreBackup',
    tags,
    summary: 'Restore a site from a backup',
    description:
      'Answers 202 with the queued restore (poll `GET …/restores/{restoreId}`). It first takes a `pre_restore` backup of the site as it is, then sends back the files and tables that differ; the tables are swapped in together. wp-config.php, the connector, the site’s address and the daemon’s application password are kept.',
    request: { params: BackupParams },
    responses: { 202: jsonContent(RestoreSchema, 'Queued'), ...problemResponses(403, 404, 409, 422) },
  }),
  getRestore: createRoute({
    method: 'get',
    path: '/sites/{siteId}/restores/{restoreId}',
    operationId: 'getRestore',
    tags,
    summary: 'One restore',
    request: { params: RestoreParams },
    responses: { 200: jsonContent(RestoreSchema, 'The restore'), ...problemResponses(404) },
  }),
};

export function createBackupsRoutes({ backups }: { backups: BackupsService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, async (c) => {
      const { limit, cursor } = c.req.valid('query');
      const rows = await backups.list(c.req.valid('param').siteId, { limit: limit + 1, before: decodeCursor(cursor) });
      const page = toPage(rows, limit);
      return c.json({ items: page.items.map(backupView), nextCursor: page.nextCursor }, 200);
    })
    .openapi(routes.create, async (c) => c.json(backupView(await backups.request(c.req.valid('param').siteId)), 202))
    .openapi(routes.get, async (c) =>
      c.json(backupView(await backups.get(c.req.valid('param').siteId, c.req.valid('param').backupId)), 200),
    )
    .openapi(routes.verify, async (c) => {
      const { siteId, backupId } = c.req.valid('param');
      await backups.get(siteId, backupId);
      const job = jobView(await backups.requestVerify(backupId, c.req.valid('query'), c.get('actor')));
      return c.json(job as z.infer<typeof VerifyJobSchema>, 202);
    })
    .openapi(routes.repair, async (c) => {
      const { siteId, backupId } = c.req.valid('param');
      await backups.get(siteId, backupId);
      return c.json(jobView(await backups.requestRepair(backupId, c.req.valid('query'), c.get('actor'))), 202);
    })
    .openapi(routes.download, async (c) => {
      const { filename, stream } = await backups.archive(c.req.valid('param').siteId, c.req.valid('param').backupId);
      c.header('content-type', 'application/gzip');
      c.header('content-disposition', `attachment; filename="${filename}"`);
      return c.body(Readable.toWeb(stream) as ReadableStream, 200);
    })
    .openapi(routes.restore, async (c) =>
      c.json(restoreView(await backups.restore(c.req.valid('param').siteId, c.req.valid('param').backupId)), 202),
    )
    .openapi(routes.getRestore, async (c) =>
      c.json(restoreView(await backups.getRestore(c.req.valid('param').siteId, c.req.valid('param').restoreId)), 200),
    );
}
