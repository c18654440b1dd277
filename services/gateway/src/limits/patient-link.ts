/**
 * The second, patient Redis link that tells a Redis that is gone from one whose reply is merely late.
 *
 * A command timeout is no evidence of an outage: when the gateway's own event loop is busy for longer than the
 * timeout, ioredis' timer fires before the loop reads a reply that arrived long ago. A command sent on this link
 * has no ioredis timeout; it gets `timeoutMs` of wall time, and when that timer fires the event loop is given one
 * more turn (`setImmediate` runs after the poll phase that reads sockets) before concluding, so a reply already
 * in the socket buffer still counts. Only a command that got no reply that way is evidence that Redis is gone.
 */
import type { Redis } from "ioredis";
import type { RedisConnection } from "../cache/redis.js";

/** How a command on the patient link ended. */
export type PatientReply<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A lazily opened duplicate of the gateway's connection (closed with it); see the module comment. */
export class PatientLink {
  private link: Redis | undefined;

  /**
   * @param connection the gateway's Redis connection.
   * @param timeoutMs wall time a command may take before it counts as unanswered, ms.
   * @param setup run once on the new link (e.g. `defineCommand`).
   */
  constructor(
    private readonly connection: RedisConnection,
    readonly timeoutMs: number,
    private readonly setup: (link: Redis) => void,
  ) {}

  /** The link, opened on first use. */
  get client(): Redis {
    if (this.link === undefined) {
      this.link = this.connection.duplicate("limits-patient");
      this.setup(this.link);
    }
    return this.link;
  }

  /** Sends a command; never rejects. `{ok: false}` with the error, or a timeout error when no reply came. */
  run<T>(send: (link: Redis) => Promise<T>): Promise<PatientReply<T>> {
    const link = this.client;
    return new Promise<PatientReply<T>>((resolve) => {
      let settled = false;
      const done = (reply: PatientReply<T>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(reply);
      };
      const timer = setTimeout(
        () =>
          setImmediate(() =>
            done({ ok: false, error: new Error(`no reply within ${this.timeoutMs} ms on the patient link`) }),
          ),
        this.timeoutMs,
      );
      send(link).then(
        (value) => done({ ok: true, value }),
        (error: unknown) => done({ ok: false, error }),
      );
    });
  }
}
