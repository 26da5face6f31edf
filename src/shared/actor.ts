import { AsyncLocalStorage } from 'node:async_hooks';

/** Who asked for the request being handled: an API token (`token`) or a signed-in dashboard user (`user`), by id. */
export interface Actor {
  kind: 'token' | 'user';
  id: string;
}

const acting = new AsyncLocalStorage<Actor>();

/** Runs a request's handling as `actor`: the authentication middlewares wrap `next()` in it. */
export const actingAs = <T>(actor: Actor, work: () => T): T => acting.run(actor, work);

/**
 * Who the request being handled is acting as, if anyone. Read it on the request's own path (in the
 * route or a service it calls directly), before the work is queued: a queue may run a task in the
 * context of whichever caller's promise chain started it.
 */
export const currentActor = (): Actor | undefined => acting.getStore();
