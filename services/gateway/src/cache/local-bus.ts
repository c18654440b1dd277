/**
 * The {@link InvalidationBus} of a gateway without Redis: one process, so publishing calls the handlers
 * directly. Also the in-process half of the Redis bus, which delivers its own messages this way.
 */
import type { FastifyBaseLogger } from "fastify";
import type { InvalidationBus, InvalidationMessage } from "./types.js";

/** Calls every subscribed handler synchronously, in subscription order; a throwing handler is logged, not rethrown. */
export class LocalInvalidationBus implements InvalidationBus {
  private readonly handlers: Array<(message: InvalidationMessage) => void> = [];

  /** @param log receives handler failures (at warn); optional. */
  constructor(private readonly log?: FastifyBaseLogger) {}

  /** Delivers `message` to this process's handlers. Never throws. */
  async publish(message: InvalidationMessage): Promise<void> {
    this.deliver(message);
  }

  subscribe(handler: (message: InvalidationMessage) => void): void {
    this.handlers.push(handler);
  }

  /** Calls each handler with `message`, isolating failures. */
  deliver(message: InvalidationMessage): void {
    for (const handler of this.handlers) {
      try {
        handler(message);
      } catch (error) {
        this.log?.warn({ err: error, kind: message.kind }, "invalidation handler failed");
      }
    }
  }
}
