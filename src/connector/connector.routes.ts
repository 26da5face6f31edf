import { readFile } from 'node:fs/promises';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/auth.js';
import { problemResponses } from '../http/openapi.js';
import { defineProblem } from '../shared/errors.js';
import { CONNECTOR_DOWNLOAD_PATH } from '../wordpress/connector-client.js';

const connectorPackageProblems = {
  missing: defineProblem('connector-package-missing', 404, 'The connector package has not been built'),
};

const download = createRoute({
  method: 'get',
  path: CONNECTOR_DOWNLOAD_PATH.replace(/^\/api/, ''),
  operationId: 'downloadConnector',
  tags: ['Connector'],
  summary: 'Download the Sitewarden connector plugin',
  description: 'The connector as an installable zip: upload it in wp-admin under Plugins → Add New → Upload Plugin, then activate it. Plugin and theme updates, theme activation and deletion need it.',
  responses: {
    200: { description: 'The plugin zip', content: { 'application/zip': { schema: z.string().openapi({ format: 'binary' }) } } },
    ...problemResponses(404),
  },
});

/** Serves the zip that `npm run build` packs from connector/. */
export function createConnectorRoutes({ connectorZipPath }: { connectorZipPath: string }) {
  return new OpenAPIHono<AppEnv>().openapi(download, async (c) => {
    let zip: Buffer;
    try {
      zip = await readFile(connectorZipPath);
    } catch {
      throw connectorPackageProblems.missing.create(`${connectorZipPath} does not exist; run npm run build`);
    }
    return c.body(new Uint8Array(zip), 200, { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="sitewarden-connector.zip"' });
  });
}
