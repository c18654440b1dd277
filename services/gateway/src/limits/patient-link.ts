/**
 * The second, patient Redis link that tells a Redis that is gone from one whose reply is merely late.
 *
 * A command timeout is no evidence of an outage: when the gateway's own event loop is busy for longer than the
 * timeout, ioredis' timer fires before the loop reads a reply that arrived long ago. A command sent on this link
 * has no ioredis timeout; it gets `timeoutMs` of wall time, and when that timer fires the event loop is given one
 * more turn (`setImmediate` runs after the poll phase that reads sockets) before concluding, so a reply already
 * in the socket buffer still counts. The link also measures how long it has gone without any reply while it had
 * commands outstanding ({@link PatientLink.silentForMs}): the evidence that Redis is gone.
 */
import type { Redis } from "ioredis";
import type { RedisConnection } from "../cache/redis.js";

/** How a command on the patient link ended. */
export type PatientReply<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A duplicate of the gateway's connection without command timeout; see the module comment. */
export class PatientLink {
  /** The link, opened at once (so that it is connected before a burst needs it) and closed with the connection. */
  readonly client: Redis;
  private pending = 0;
  /** `performance.now()` since when commands have been outstanding without any reply, or undefined. */
  private silentSince: number | undefined;

  /**
   * @param connection the gateway's Redis connection.
   * @param timeoutMs wall time a command may take before it counts as unanswered, ms.
   * @param setup run once on the new link (e.g. `defineCommand`).
   */
  constructor(
    connection: RedisConnection,
    readonly timeoutMs: number,
    setup: (link: Redis) => void,
  ) {
    this.client = connection.duplicate("limits-patient");
    setup(this.client);
  }

  /** How long, ms, the link has had commands outstanding without getting any reply (0 when none). */
  silentForMs(): number {
    return this.silentSince === undefined ? 0 : performance.now() - this.silentSince;
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
      this.pending++;
      this.silentSince ??= performance.now();
      const answered = () => {
        this.pending--;
        this.silentSince = this.pending > 0 ? performance.now() : undefined;
      };
      send(link).then(
        (value) => {
          answered();
          done({ ok: true, value });
        },
        (error: unknown) => {
          // An error reply is a reply; a rejection without one (link closed) is not.
          if (error instanceof Error && error.name === "ReplyError") answered();
          else this.pending--;
          done({ ok: false, error });
        },
      );
    });
  }
}
