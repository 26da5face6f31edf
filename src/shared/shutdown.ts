import type { Logger } from 'pino';

/** Collects close steps as services start, and runs them in reverse order once. */
export interface ShutdownRegistry {
  register(name: string, close: () => Promise<void> | void): void;
  shutdown(): Promise<void>;
}

export function createShutdownRegistry({ logger }: { logger: Logger }): ShutdownRegistry {
  const steps: { name: string; close: () => Promise<void> | void }[] = [];
  let running: Promise<void> | undefined;
  return {
    register(name, close) {
      steps.push({ name, close });
    },
    shutdown() {
      running ??= (async () => {
        for (const step of [...steps].reverse()) {
          try {
            await step.close();
          } catch (error) {
            logger.error({ err: error, step: step.name }, 'shutdown step failed');
          }
        }
      })();
      return running;
    },
  };
}
