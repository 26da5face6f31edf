/** Polling helpers for tests that wait on other processes (workers, listeners, databases). */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every `pollMs` until it holds; after `timeoutMs`, fails naming `what()` (read only then). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: () => string,
  pollMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await sleep(pollMs);
  }
}
