/**
 * Which deployments ignore the output cap they are sent, so that their JSON calls go upstream as streams the
 * gateway cuts at the call's reservation and assembles into the JSON answer (`streaming/assemble-json.ts`).
 *
 * A deployment is one when its config says so (`model_info.ignores_output_cap: true`, the gateway's own key), or
 * once it answered past a call's cap (`pipeline/steps/account.ts`): it is then marked for {@link MARK_TTL_MS}
 * (24 h), on every instance:
 * - in Redis, `<keyPrefix>cap-ignorer:<model_info.id>` holding the end of the mark (epoch ms) with that TTL;
 * - on the invalidation bus (`cache/types.ts`, message kind `deployment`), so the other instances learn it within
 *   the pub/sub delivery time;
 * - and read back from Redis (one MGET of the configured deployments' keys) at start and every
 *   {@link RESYNC_MS}, which covers an instance that started later or missed a message (Redis pub/sub keeps no
 *   backlog).
 * Without Redis the mark is kept in process (the bus reaches this process only).
 *
 * The hot path ({@link CapIgnorers.ignores}, asked per upstream attempt of a JSON call) is a property read and a
 * map lookup: no Redis round trip.
 */
import type { FastifyBaseLogger } from "fastify";
import type { RedisConnection } from "../cache/redis.js";
import type { InvalidationBus } from "../cache/types.js";
import type { Deployment } from "../config/types.js";
import type { Clock } from "../time/clock.js";

/** How long a deployment stays marked after its last overrun, ms (24 h). */
export const MARK_TTL_MS = 24 * 60 * 60 * 1000;
/** How often the marks are read back from Redis, ms. */
export const RESYNC_MS = 30_000;

/** Inputs of {@link CapIgnorers}. */
export interface CapIgnorersOptions {
  clock: Clock;
  /** Every configured deployment: the ids read back from Redis. */
  deployments: readonly Deployment[];
  /** Shares the marks with the other instances (REDIS_URL); without it they are kept in process. */
  redis?: RedisConnection | undefined;
  /** Carries a new mark to every instance (this one included); without it only this process learns it. */
  bus?: InvalidationBus | undefined;
  log?: FastifyBaseLogger | undefined;
  /** Mark lifetime, ms (default {@link MARK_TTL_MS}). */
  ttlMs?: number;
  /** Read-back interval, ms (default {@link RESYNC_MS}); 0: only at start. */
  resyncMs?: number;
}

/** The deployments known to ignore output caps; see the module comment. */
export class CapIgnorers {
  /** Deployment id → end of its mark, epoch ms. */
  private readonly marks = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CapIgnorersOptions) {
    this.ttlMs = options.ttlMs ?? MARK_TTL_MS;
    options.bus?.subscribe((message) => {
      if (message.kind === "deployment") this.apply(message.deploymentId, message.until);
    });
    const resyncMs = options.resyncMs ?? RESYNC_MS;
    if (options.redis !== undefined) {
      // At start, and after an outage (marks set meanwhile reached Redis, perhaps not this instance's bus).
      options.redis.onStatusChange((status) => {
        if (status === "connected") void this.sync();
      });
      void this.sync();
      if (resyncMs > 0) {
        this.timer = setInterval(() => void this.sync(), resyncMs);
        this.timer.unref();
      }
    }
  }

  /**
   * Whether `deployment`'s JSON calls go upstream as streams: declared in `model_info`, or marked and the mark
   * not expired. Synchronous and cheap (no I/O).
   */
  ignores(deployment: Deployment): boolean {
    if (deployment.ignoresOutputCap === true) return true;
    if (this.marks.size === 0) return false;
    const until = this.marks.get(deployment.id);
    return until !== undefined && until > this.options.clock.now();
  }

  /**
   * Marks `deployment` as ignoring caps for the mark's lifetime: here at once, then in Redis and on the bus for
   * the other instances. Never throws (a Redis failure leaves the mark in process and is logged).
   */
  async mark(deployment: Deployment): Promise<void> {
    const until = this.options.clock.now() + this.ttlMs;
    const wasMarked = this.ignores(deployment);
    this.apply(deployment.id, until);
    if (!wasMarked)
      this.options.log?.warn(
        { modelId: deployment.id, until: new Date(until).toISOString() },
        "deployment marked as ignoring output caps: its JSON calls go upstream as streams cut at the reservation",
      );
    const { redis, bus } = this.options;
    if (redis?.isConnected() === true) {
      try {
        await redis.client.set(this.keyOf(deployment.id), String(until), "PX", this.ttlMs);
      } catch (error) {
        redis.reportFailureIfLinkDown("cap-ignorer", error);
      }
    }
    await bus?.publish({ kind: "deployment", deploymentId: deployment.id, until });
  }

  /** Reads every configured deployment's mark from Redis (one MGET). Never throws. */
  async sync(): Promise<void> {
    const { redis, deployments } = this.options;
    if (redis === undefined || deployments.length === 0 || !redis.isConnected()) return;
    const ids = deployments.map((d) => d.id);
    try {
      const values = await redis.client.mget(ids.map((id) => this.keyOf(id)));
      values.forEach((value, i) => {
        const until = value === null ? Number.NaN : Number(value);
        if (Number.isFinite(until)) this.apply(ids[i]!, until);
      });
    } catch (error) {
      redis.reportFailureIfLinkDown("cap-ignorer", error);
    }
  }

  /** Stops the read-back timer. */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  private keyOf(id: string): string {
    return `${this.options.redis!.keyPrefix}cap-ignorer:${id}`;
  }

  /** Keeps the later end for `id`; drops expired marks. */
  private apply(id: string, until: number): void {
    const now = this.options.clock.now();
    for (const [other, end] of this.marks) if (end <= now) this.marks.delete(other);
    if (until <= now) return;
    if ((this.marks.get(id) ?? 0) < until) this.marks.set(id, until);
  }
}

/**
 * The streamed form of a JSON call's body (OpenAI API reference, chat and legacy completions: `stream`,
 * `stream_options.include_usage`, which makes the last chunk carry the usage): the client's body with
 * `stream: true` and usage asked for.
 */
export function streamedBody(body: Record<string, unknown>): Record<string, unknown> {
  const options = body.stream_options;
  const merged = typeof options === "object" && options !== null ? options : {};
  return { ...body, stream: true, stream_options: { ...merged, include_usage: true } };
}
