/**
 * Domain errors carry everything needed to answer an RFC 9457 problem document.
 * Services throw them; one error handler in http/ turns them into responses.
 */
interface ProblemFields {
  /** Stable short name; the problem `type` is `/problems/<name>`. */
  readonly name: string;
  readonly status: number;
  readonly title: string;
}

/** A declared problem: its fields, and how to throw it. Errors carry this very object, so code matches by reference. */
export interface Problem extends ProblemFields {
  create: (detail: string, extensions?: Record<string, unknown>, options?: ErrorOptions) => AppError;
}

export class AppError extends Error {
  readonly problem: Problem;
  readonly detail: string;
  readonly extensions: Record<string, unknown>;

  constructor(problem: Problem, detail: string, extensions: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(detail, options);
    this.name = 'AppError';
    this.problem = problem;
    this.detail = detail;
    this.extensions = extensions;
  }
}

export const problemType = (name: string): string => `/problems/${name}`;

/** Declares a problem once so the same name, status and title are used everywhere. */
export function defineProblem(name: string, status: number, title: string): Problem {
  const problem: Problem = {
    name,
    status,
    title,
    create: (detail, extensions, options) => new AppError(problem, detail, extensions, options),
  };
  return problem;
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;

/** Whether `error` is one of `problems` (the objects defineProblem returned, not a name that looks alike). */
export const isProblem = (error: unknown, ...problems: Problem[]): error is AppError =>
  error instanceof AppError && problems.includes(error.problem);

export const commonProblems = {
  validation: defineProblem('validation-failed', 400, 'The request is not valid'),
  unauthorized: defineProblem('unauthorized', 401, 'Authentication required'),
  forbidden: defineProblem('forbidden', 403, 'Not allowed with this token'),
  notFound: defineProblem('not-found', 404, 'No such resource'),
  methodNotAllowed: defineProblem('method-not-allowed', 405, 'Method not allowed'),
  unsupportedMediaType: defineProblem('unsupported-media-type', 415, 'Unsupported media type'),
  payloadTooLarge: defineProblem('payload-too-large', 413, 'Request body too large'),
  internal: defineProblem('internal-error', 500, 'Internal error'),
} as const;
