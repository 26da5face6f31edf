import type { Readable } from 'node:stream';
import type { WordPressSession } from '../wordpress/wordpress-client.js';

/** Why a job's site calls stopped: the daemon is shutting down. */
export class JobAborted extends Error {
  constructor() {
    super('the daemon is shutting down');
    this.name = 'JobAborted';
  }
}

/**
 * The session a backup or restore talks to its site through, stopped by `signal`: once it is
 * aborted, every pending call rejects at once, every body being streamed fails its reader (one that
 * arrives later is destroyed unread), and no new call starts (but the one that discards a restore's
 * staging). Shutdown does not have to wait for a site's slow answer (up to the operation timeout)
 * before the job can be recorded as interrupted; the abandoned request dies with the process.
 */
export function abortableSession(session: WordPressSession, signal: AbortSignal): WordPressSession {
  /** `discard` gets what the call answers after the abort rejected it (a body nobody will read). */
  const guard = <T>(start: () => Promise<T>, discard?: (late: T) => void): Promise<T> => {
    if (signal.aborted) return Promise.reject(new JobAborted());
    const pending = start();
    return new Promise<T>((resolve, reject) => {
      const abort = () => reject(new JobAborted());
      signal.addEventListener('abort', abort, { once: true });
      pending
        .then((value) => {
          if (signal.aborted) discard?.(value);
          resolve(value);
        }, reject)
        .finally(() => signal.removeEventListener('abort', abort));
    });
  };
  const destroyOnAbort = (body: Readable): Readable => {
    // The abort may come before the body's reader starts (a file range waits for the store to open its
    // file): the error is then the reader's to meet when it starts, and an 'error' event with no listener
    // would end the process instead (a daemon stopped mid-backup under load exited 1, not 0).
    body.on('error', () => undefined);
    if (signal.aborted) body.destroy(new JobAborted());
    else {
      const abort = () => body.destroy(new JobAborted());
      signal.addEventListener('abort', abort, { once: true });
      body.once('close', () => signal.removeEventListener('abort', abort));
    }
    return body;
  };
  return {
    currentUser: () => guard(() => session.currentUser()),
    currentApplicationPasswordUuid: () => guard(() => session.currentApplicationPasswordUuid()),
    listPlugins: () => guard(() => session.listPlugins()),
    listThemes: () => guard(() => session.listThemes()),
    revokeApplicationPassword: (uuid) => guard(() => session.revokeApplicationPassword(uuid)),
    // A restore's abort still goes out: it discards what the restore staged on the site.
    call: (method, route, options) =>
      route.endsWith('/restore/abort')
        ? session.call(method, route, options)
        : guard(() => session.call(method, route, options)),
    callRaw: (method, route, options) => guard(() => session.callRaw(method, route, options)),
    callStream: async (route, options) =>
      destroyOnAbort(
        await guard(
          () => session.callStream(route, options),
          (late) => late.destroy(),
        ),
      ),
  };
}
