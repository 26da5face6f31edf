import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { jsonContent, problemResponses } from '../http/openapi.js';
import { TagName } from '../sites/index.js';
import { RetentionOverviewSchema, TagRetentionInput, TagRetentionSchema } from './backups.schemas.js';
import type { BackupsService } from './backups.service.js';
import type { BackupTagRetentionRow } from './backups.table.js';

const tags = ['Backups'];
const TagParams = z.object({ tag: TagName.openapi({ param: { name: 'tag', in: 'path' } }) });

const tagView = (row: BackupTagRetentionRow) => ({ ...row, updatedAt: row.updatedAt.toISOString() });

const routes = {
  view: createRoute({
    method: 'get',
    path: '/backup-retention',
    operationId: 'getBackupRetention',
    tags,
    summary: 'Backup retention: defaults and tags',
    description:
      'A site’s retention, field by field: its own value (`PATCH /api/sites/{id}/settings`), else the largest its tags set here (what any of them keeps), else the daemon-wide `SITEWARDEN_BACKUP_KEEP_*` default.',
    responses: {
      200: jsonContent(RetentionOverviewSchema, 'The defaults and every tag’s retention'),
      ...problemResponses(401),
    },
  }),
  setTag: createRoute({
    method: 'put',
    path: '/backup-retention/{tag}',
    operationId: 'setTagBackupRetention',
    tags,
    summary: 'Set the backup retention of the sites with a tag',
    request: {
      params: TagParams,
      body: { content: { 'application/json': { schema: TagRetentionInput } }, required: true },
    },
    responses: { 200: jsonContent(TagRetentionSchema, 'The tag’s retention'), ...problemResponses(400, 403) },
  }),
  deleteTag: createRoute({
    method: 'delete',
    path: '/backup-retention/{tag}',
    operationId: 'deleteTagBackupRetention',
    tags,
    summary: 'Remove a tag’s backup retention',
    request: { params: TagParams },
    responses: { 204: { description: 'Removed (or there was none)' }, ...problemResponses(400, 403) },
  }),
};

export function createRetentionRoutes({ backups }: { backups: BackupsService }) {
  return new OpenAPIHono<AppEnv>()
    .openapi(routes.view, async (c) => {
      const { defaults, tags: byTag } = await backups.retention.view();
      return c.json({ defaults, tags: byTag.map(tagView) }, 200);
    })
    .openapi(routes.setTag, async (c) =>
      c.json(tagView(await backups.retention.setTag(c.req.valid('param').tag, c.req.valid('json'))), 200),
    )
    .openapi(routes.deleteTag, async (c) => {
      await backups.retention.deleteTag(c.req.valid('param').tag);
      return c.body(null, 204);
    });
}
