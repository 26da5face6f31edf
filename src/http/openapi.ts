import { z } from '@hono/zod-openapi';
import { PROBLEM_CONTENT_TYPE } from './problem.js';

const ProblemSchema = z
  .object({
    type: z.string().openapi({
      description: 'Stable problem type, `/problems/<name>`; see the problem catalogue in docs/api.md.',
      example: '/problems/site-not-found',
    }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().optional(),
    errors: z
      .array(z.object({ field: z.string(), in: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: 'For `validation-failed`: every offending field.' }),
  })
  .catchall(z.unknown())
  .openapi('Problem');

const problemContent = { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } };

/** Shared error responses so every route documents its failures the same way. */
export function problemResponses(...statuses: number[]) {
  const descriptions: Record<number, string> = {
    400: 'The request is not valid (`validation-failed` lists the fields)',
    401: 'No API token, or an unknown, revoked or expired one',
    403: 'The token’s role does not allow this (docs/api.md, Roles)',
    404: 'No such resource',
    409: 'Conflicts with the current state',
    410: 'Expired',
    413: 'Request body too large',
    415: 'Unsupported request body type',
    422: 'The site cannot be used this way',
    502: 'The site could not be reached or answered with an error',
    504: 'The site did not answer in time',
  };
  return Object.fromEntries(
    [401, ...statuses].map((status) => [
      status,
      { description: descriptions[status] ?? 'Problem', content: problemContent },
    ]),
  );
}

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
