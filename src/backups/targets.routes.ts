import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { JobSchema, jobView } from '../jobs/jobs.schemas.js';
import { RestoreSchema, restoreView } from './backups.schemas.js';
import type { BackupsService } from './backups.service.js';
import { SnapshotRecord } from './offsite/snapshots.js';

const tags = ['Backup targets'];

const TargetParams = z.object({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,31}$/)
    .openapi({ param: { name: 'name', in: 'path' }, example: 'offsite' }),
});
const SnapshotParams = TargetParams.extend({
  backupId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'backupId', in: 'path' }, example: 'bkp_01jc0z6x8m3yq4x0h7a9b2c3d4' }),
});

const SnapshotSchema = SnapshotRecord.omit({ format: true }).openapi('TargetSnapshot');
const SnapshotList = z
  .object({
    items: z.array(SnapshotSchema),
    unreadable: z.array(z.string()).openapi({
      description: 'Snapshot records that could not be opened (altered, or sealed with another key), by bucket key.',
    }),
  })
  .openapi('TargetSnapshots');
const RecoverInput = z
  .object({ siteId: z.string().min(1).max(64).openapi({ description: 'The connected site to restore into.' }) })
  .strict()
  .openapi('TargetRestoreInput');

const routes = {
  list: createRoute({
    method: 'get',
    path: '/targets',
    operationId: 'listBackupTargets',
    tags,
    summary: 'Offsite backup targets',
    description: 'The offsite targets configured by `SITEWARDEN_TARGETS` (the local store, `local`, is not listed).',
    responses: { 200: jsonContent(z.object({ items: z.array(z.string()) }), 'Target names'), ...problemResponses(401) },
  }),
  snapshots: createRoute({
    method: 'get',
    path: '/targets/{name}/snapshots',
    operationId: 'listTargetSnapshots',
    tags,
    summary: 'Backups a target holds',
    description:
      'Read from the target itself (its sealed snapshot records), not from this daemon’s history: a new daemon given only the target’s configuration and passphrase lists every site’s backups there.',
    request: { params: TargetParams },
    responses: {
      200: jsonContent(SnapshotList, 'The snapshots, oldest first'),
      ...problemResponses(400, 404, 409, 422, 502),
    },
  }),
  restore: createRoute({
    method: 'post',
    path: '/targets/{name}/snapshots/{backupId}/restore',
    operationId: 'restoreFromTarget',
    tags,
    summary: 'Restore a site from a backup a target holds',
    description:
      'Disaster recovery: restores a backup the target holds into a connected site of this daemon, even one this daemon never took (it is recorded in the site’s history first, held by that target). Answers 202 with the queued restore, as `POST …/backups/{backupId}/restore` does.',
    request: {
      params: SnapshotParams,
      body: { content: { 'application/json': { schema: RecoverInput } }, required: true },
    },
    responses: { 202: jsonContent(RestoreSchema, 'Queued'), ...problemResponses(400, 403, 404, 409, 422, 502) },
  }),
  prune: createRoute({
    method: 'post',
    path: '/targets/{name}/prune',
    operationId: 'pruneTarget',
    tags,
    summary: 'Prune a target',
    description:
      'Queues a prune of the target as a job (kind `target-prune`) and answers it: the job removes the snapshot records of backups retention deleted, then every object no remaining snapshot references. It waits for running backups and restores (they wait for it). Follow it at `GET /api/jobs/{jobId}`: once `succeeded`, its `progress` says what was removed (also logged as `target.pruned`). The daemon also prunes every target daily.',
    request: { params: TargetParams },
    responses: { 202: jsonContent(JobSchema, 'The prune job, queued'), ...problemResponses(403, 404) },
  }),
};

export function createTargetsRoutes({ backups }: { backups: BackupsService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.list, (c) => c.json({ items: backups.targets.names }, 200))
    .openapi(routes.snapshots, async (c) => {
      const { snapshots, unreadable } = await backups.targets.snapshots(c.req.valid('param').name);
      return c.json({ items: snapshots.map(({ format: _format, ...snapshot }) => snapshot), unreadable }, 200);
    })
    .openapi(routes.restore, async (c) => {
      const { name, backupId } = c.req.valid('param');
      return c.json(restoreView(await backups.targets.restore(name, backupId, c.req.valid('json').siteId)), 202);
    })
    .openapi(routes.prune, async (c) =>
      c.json(jobView(await backups.targets.requestPrune(c.req.valid('param').name)), 202),
    );
}
