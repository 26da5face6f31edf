import { maxHeaderSize, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { defineProblem } from '../shared/errors.js';
import { PROBLEM_CONTENT_TYPE, problemDocument } from './problem.js';

/** Requests Node's HTTP parser refuses before the app sees them. */
const clientErrorProblems = {
  headersTooLarge: defineProblem('request-headers-too-large', 431, 'Request header fields too large'),
  requestTimeout: defineProblem('request-timeout', 408, 'The request took too long to arrive'),
  malformed: defineProblem('malformed-request', 400, 'The request is not valid HTTP'),
};

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Node answers a request it cannot parse (a 64 KB header, broken HTTP) itself, with a bare status
 * line and no body; this answers the same statuses as problem documents, like every other error.
 */
export function answerClientErrorsAsProblems(server: Server): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const problem =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? clientErrorProblems.headersTooLarge.create(
            `the request's header fields are larger than the ${Math.round(maxHeaderSize / 1024)} KB this server reads`,
          )
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? clientErrorProblems.requestTimeout.create('the request did not arrive in time')
          : clientErrorProblems.malformed.create(
              `the request could not be parsed as HTTP/1.1 (${error.code ?? 'parse error'})`,
            );
    const body = JSON.stringify(problemDocument(problem));
    socket.end(
      [
        `HTTP/1.1 ${problem.problem.status} ${REASONS[problem.problem.status]}`,
        `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}
