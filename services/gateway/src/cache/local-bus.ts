/**
 * The {@link InvalidationBus} of a gateway without Redis: one process, so publishing calls the handlers
 * directly. Also the in-process half of the Redis bus, which delivers its own messages this way.
 *
 * It reaches every instance only when this process is the only one: a node:cluster worker (GATEWAY_WORKERS > 1)
 * shares nothing in process with its siblings, so there its {@link LocalInvalidationBus.deliveringSince} is
 * undefined and the caches keep their short refresh ages.
 */
import cluster from "node:cluster";
import type { FastifyBaseLogger } from "fastify";
import type { InvalidationBus, InvalidationMessage } from "./types.js";

/** Options of {@link LocalInvalidationBus}. */
export interface LocalBusOptions {
  /**
   * Whether this process is the only gateway process, so its messages reach every cache. Default: true unless
   * this process is a node:cluster worker (GATEWAY_WORKERS > 1).
   */
  soleInstance?: boolean;
}

/** Calls every subscribed handler synchronously, in subscription order; a throwing handler is logged, not rethrown. */
export class LocalInvalidationBus implements InvalidationBus {
  private readonly handlers: Array<(message: InvalidationMessage) => void> = [];
  private readonly since: number | undefined;

  /** @param log receives handler failures (at warn); optional. */
  constructor(
    private readonly log?: FastifyBaseLogger,
    options: LocalBusOptions = {},
  ) {
    const sole = options.soleInstance ?? !cluster.isWorker;
    this.since = sole ? performance.now() : undefined;
  }

  /** Delivers `message` to this process's handlers. Never throws. */
  async publish(message: InvalidationMessage): Promise<void> {
    this.deliver(message);
  }

  subscribe(handler: (message: InvalidationMessage) => void): void {
    this.handlers.push(handler);
  }

  /** Its creation time when this is the only gateway process; undefined in one of several workers. */
  deliveringSince(): number | undefined {
    return this.since;
  }

  /** True when this is the only gateway process: publishing delivered every message before it returned. */
  async caughtUp(): Promise<boolean> {
    return this.since !== undefined;
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
