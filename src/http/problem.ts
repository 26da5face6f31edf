import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import type { ZodError } from 'zod';
import { commonProblems, isAppError, problemType, type AppError } from '../shared/errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

export function problemDocument(error: AppError, instance?: string): ProblemDocument {
  return {
    type: problemType(error.problem.name),
    title: error.problem.title,
    status: error.problem.status,
    detail: error.detail,
    ...(instance ? { instance } : {}),
    ...error.extensions,
  };
}

export function problemResponse(c: Context, error: AppError): Response {
  const body = problemDocument(error, c.req.path);
  return c.body(JSON.stringify(body), error.problem.status as ContentfulStatusCode, {
    'content-type': PROBLEM_CONTENT_TYPE,
  });
}

/** A zod failure becomes one `validation-failed` problem listing every offending field. */
export function validationError(error: ZodError, location: string) {
  const errors = error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : location,
    in: location,
    message: issue.message,
  }));
  const summary = errors.map((entry) => `${entry.field}: ${entry.message}`).join('; ');
  return commonProblems.validation.create(`invalid request ${location}: ${summary}`, { errors });
}

/** The one place where thrown errors become responses. */
export function createErrorHandler(logger: Logger) {
  return (error: Error, c: Context): Response => {
    if (isAppError(error)) return problemResponse(c, error);
    if (error instanceof HTTPException) {
      const byStatus: Record<number, (typeof commonProblems)[keyof typeof commonProblems]> = {
        400: commonProblems.validation,
        401: commonProblems.unauthorized,
        404: commonProblems.notFound,
        413: commonProblems.payloadTooLarge,
        415: commonProblems.unsupportedMediaType,
      };
      const problem = byStatus[error.status];
      if (problem) return problemResponse(c, problem.create(error.message || problem.title));
    }
    logger.error({ err: error, method: c.req.method, path: c.req.path }, 'unhandled error');
    return problemResponse(
      c,
      commonProblems.internal.create('an unexpected error occurred; the daemon log has the details'),
    );
  };
}
