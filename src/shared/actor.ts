/**
 * Who asked for the request being handled: an API token (`token`) or a signed-in dashboard user
 * (`user`), by id. The authentication middlewares set it on the request's context (`actor`); a route
 * that starts an update hands it to the service as `requestedBy`, and the update history records it.
 * Passed, not ambient: an AsyncLocalStorage would enable Node 20's promise hooks for the whole
 * process, a cost on every promise (about a tenth of a bulk update's CPU, bench/bulk-updates.ts).
 */
export interface Actor {
  kind: 'token' | 'user';
  id: string;
}

/** Who asked for an update, when a request did: the update services' last, optional argument. */
export interface RequestedBy {
  requestedBy?: Actor;
}
