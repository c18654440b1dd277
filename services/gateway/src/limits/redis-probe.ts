/**
 * The health probe that decides whether a Redis that stopped answering in time is gone or merely late.
 *
 * A command timeout is no evidence: when the gateway's own event loop is busy for longer than the timeout,
 * ioredis' timer fires before the loop reads a reply that arrived long ago. The probe sends a PING on a link of
 * its own (no command timeout, so it is never rejected early) and waits up to `timeoutMs`; when its timer fires,
 * it gives the event loop one more turn (`setImmediate` runs after the poll phase that reads sockets) before
 * concluding, so a reply that is already in the socket buffer still counts. Concurrent callers share one probe.
 */
import type { Redis } from "ioredis";
import type { RedisConnection } from "../cache/redis.js";

/** `alive`: Redis answered the probe. `gone`: it did not within the probe timeout. */
export type ProbeVerdict = "alive" | "gone";

/** One PING at a time on a dedicated link; see the module comment. */
export class RedisProbe {
  private link: Redis | undefined;
  private inFlight: Promise<ProbeVerdict> | undefined;

  /**
   * @param connection the gateway's Redis connection (the probe link is its duplicate, closed with it).
   * @param timeoutMs how long a PING may take before Redis counts as gone, ms.
   */
  constructor(
    private readonly connection: RedisConnection,
    private readonly timeoutMs: number,
  ) {}

  /** The verdict of the probe in flight, or of a new one. Never rejects. */
  check(): Promise<ProbeVerdict> {
    this.inFlight ??= this.ping().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private ping(): Promise<ProbeVerdict> {
    this.link ??= this.connection.duplicate("probe");
    const link = this.link;
    const started = performance.now();
    return new Promise<ProbeVerdict>((resolve) => {
      let answered = false;
      const timer = setTimeout(
        () => setImmediate(() => resolve(answered ? "alive" : "gone")),
        this.timeoutMs,
      );
      link.ping().then(
        () => {
          answered = true;
          this.connection.observe("ping", (performance.now() - started) / 1000);
          clearTimeout(timer);
          resolve("alive");
        },
        () => {
          clearTimeout(timer);
          resolve("gone");
        },
      );
    });
  }
}
