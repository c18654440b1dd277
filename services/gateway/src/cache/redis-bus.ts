/**
 * {@link InvalidationBus} over Redis pub/sub (https://redis.io/docs/latest/develop/interact/pubsub/): PUBLISH on
 * the command connection, SUBSCRIBE on a dedicated connection (a subscribed connection can issue nothing else).
 *
 * Wire format on channel `<keyPrefix>invalidate`: `<instance id> <message as JSON>`, e.g.
 * `3f9c… {"kind":"key","key":{"token":"ab12…","revokedAt":1767225600000,…}}`. The publishing instance delivers to
 * its own handlers at once and skips its echo, so a change is visible locally even while Redis is down.
 *
 * Delivery is at most once: Redis pub/sub keeps no backlog, so a message published while Redis is down, or
 * while a subscriber is reconnecting, never reaches the other instances. {@link RedisInvalidationBus.deliveringSince}
 * says since when the subscription has been active without a break (it restarts at every reconnect, when this
 * bus subscribes again); the caches keep their short refresh ages (the revocation bound during a Redis outage)
 * for every record read before that moment. A link that dies silently (no FIN or RST: a partition, a dropped
 * NAT entry) is caught by a PING on the subscriber every second: no reply within 3 s ends the continuity and
 * reconnects it.
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Redis } from "ioredis";
import { CACHE_AGES, TIMED_OUT, waitAtMost } from "./freshness.js";
import { LocalInvalidationBus } from "./local-bus.js";
import type { RedisConnection } from "./redis.js";
import { type InvalidationBus, type InvalidationMessage, parseInvalidationMessage } from "./types.js";

/** How often the subscriber link is checked, and how long a PING may go unanswered before it counts as dead, ms. */
const LINK_CHECK_MS = 1000;
const LINK_TIMEOUT_MS = 3000;
/** How long {@link RedisInvalidationBus.caughtUp} waits for its PING's reply, ms. */
const BARRIER_TIMEOUT_MS = 1000;

function decode(text: string): InvalidationMessage | undefined {
  try {
    return parseInvalidationMessage(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Cross-instance invalidation through Redis pub/sub; see the module comment for delivery guarantees. */
export class RedisInvalidationBus implements InvalidationBus {
  /** Random per process: lets an instance recognise (and skip) its own messages. */
  readonly instanceId = randomUUID();
  readonly channel: string;
  private readonly local: LocalInvalidationBus;
  private readonly subscriber: Redis;
  /** performance.now() when the current subscription became active; undefined while there is none. */
  private since: number | undefined;
  /** Counts the subscriber's connections, so that a late SUBSCRIBE reply of an earlier one is ignored. */
  private generation = 0;
  /** performance.now() when the unanswered PING on the subscriber was sent; undefined when none is. */
  private pingSentAt: number | undefined;
  private readonly watchdog: NodeJS.Timeout;
  /** Callers of {@link caughtUp} waiting for the next PING, and whether one is out. */
  private barrierWaiters: Array<(ok: boolean) => void> = [];
  private barrierOut = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly log: FastifyBaseLogger,
  ) {
    this.channel = `${connection.keyPrefix}invalidate`;
    this.local = new LocalInvalidationBus(log);
    this.subscriber = connection.duplicate("invalidation-subscriber");
    this.subscriber.on("message", (channel: string, payload: string) => this.onMessage(channel, payload));
    // Every (re)connect subscribes again and dates the subscription from the reply (ioredis also re-subscribes
    // on its own but says nothing when that is done; a second SUBSCRIBE to the channel is harmless).
    this.subscriber.on("ready", () => this.subscribeNow());
    this.subscriber.on("close", () => this.lost());
    this.subscriber.on("end", () => {
      this.lost();
      clearInterval(this.watchdog);
    });
    this.watchdog = setInterval(() => this.checkLink(), LINK_CHECK_MS);
    this.watchdog.unref();
  }

  /**
   * performance.now() (ms) of the last moment the subscriber became subscribed; undefined while it is
   * disconnected, reconnecting or not yet subscribed. Messages published by other instances since then have
   * all been received.
   */
  deliveringSince(): number | undefined {
    return this.since;
  }

  /**
   * Resolves once the subscriber connection is subscribed (or after `timeoutMs`, returning false): messages
   * published by other instances before that are not received.
   */
  async ready(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.since !== undefined) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  }

  /** Delivers locally at once, then publishes to the other instances. Never throws; Redis down means local only. */
  async publish(message: InvalidationMessage): Promise<void> {
    this.local.deliver(message);
    if (!this.connection.isConnected()) return;
    const started = performance.now();
    try {
      await this.connection.client.publish(this.channel, `${this.instanceId} ${JSON.stringify(message)}`);
      this.connection.observe("publish", (performance.now() - started) / 1000);
    } catch (error) {
      // Only a link that is down marks Redis degraded and moves limits to per-instance.
      this.connection.reportFailureIfLinkDown("publish", error);
    }
  }

  subscribe(handler: (message: InvalidationMessage) => void): void {
    this.local.subscribe(handler);
  }

  /**
   * Sends a PING on the subscriber link: Redis answers a connection in order, so its reply comes after every
   * message published before the PING was sent, and ioredis emits those messages before it resolves the reply.
   * A caller arriving while a PING is out waits for the next one (the one out may have been sent before a
   * message the caller needs), so one PING at a time serves every caller. False when not delivering, on a
   * reconnect meanwhile, or without a reply within {@link BARRIER_TIMEOUT_MS}.
   */
  caughtUp(): Promise<boolean> {
    if (this.since === undefined) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.barrierWaiters.push(resolve);
      if (!this.barrierOut) this.sendBarrier();
    });
  }

  private sendBarrier(): void {
    const waiters = this.barrierWaiters;
    this.barrierWaiters = [];
    this.barrierOut = true;
    const generation = this.generation;
    const ping = this.subscriber.ping();
    ping.catch(() => undefined); // a reply after the timeout, or a link closed meanwhile
    waitAtMost(ping, BARRIER_TIMEOUT_MS)
      .then(
        (reply) => reply !== TIMED_OUT && generation === this.generation && this.since !== undefined,
        () => false,
      )
      .then((ok) => {
        for (const resolve of waiters) resolve(ok);
        this.barrierOut = false;
        if (this.barrierWaiters.length > 0) this.sendBarrier();
      });
  }

  private subscribeNow(): void {
    const generation = this.generation;
    this.subscriber.subscribe(this.channel).then(
      () => {
        if (generation === this.generation) this.since = performance.now();
      },
      (error: unknown) => {
        this.log.warn(
          { err: error instanceof Error ? error.message : String(error) },
          "invalidation subscribe failed",
        );
      },
    );
  }

  private lost(): void {
    this.generation += 1;
    this.since = undefined;
    this.pingSentAt = undefined;
  }

  /** PINGs the subscribed link; one unanswered for {@link LINK_TIMEOUT_MS} ends the continuity and reconnects. */
  private checkLink(): void {
    if (this.since === undefined || this.subscriber.status !== "ready") return;
    const now = performance.now();
    if (this.pingSentAt !== undefined) {
      if (now - this.pingSentAt < LINK_TIMEOUT_MS) return;
      // A busy event loop runs this timer before reading a reply that arrived long ago: give it one turn to
      // read the socket (setImmediate runs after the poll phase) before calling the link dead.
      const sentAt = this.pingSentAt;
      setImmediate(() => {
        if (this.pingSentAt !== sentAt) return;
        this.log.warn(
          { silentMs: Math.round(performance.now() - sentAt) },
          `invalidation subscriber link silent: reconnecting; cached keys refresh within ${CACHE_AGES.maxStaleMs / 1000} s until it is back`,
        );
        this.lost();
        this.subscriber.disconnect(true);
      });
      return;
    }
    this.pingSentAt = now;
    const generation = this.generation;
    this.subscriber.ping().then(
      () => {
        if (generation === this.generation) this.pingSentAt = undefined;
      },
      () => undefined,
    );
  }

  private onMessage(channel: string, payload: string): void {
    if (channel !== this.channel) return;
    const space = payload.indexOf(" ");
    const origin = payload.slice(0, space);
    if (space < 0 || origin === this.instanceId) return;
    const message = decode(payload.slice(space + 1));
    if (message === undefined) {
      this.log.warn({ channel }, "ignored a malformed invalidation message");
      return;
    }
    this.local.deliver(message);
  }
}
