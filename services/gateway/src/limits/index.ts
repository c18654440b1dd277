/**
 * Composition of rate limits, budgets and the invalidation bus, as the gateway wires them.
 *
 * With `redisUrl`: a {@link RedisAdmitter} (shared limits by leases: one Redis round trip per lease, not per call;
 * docs/leases.md) falling back to an {@link InProcessAdmitter} once Redis is shown to be gone (a late reply is not
 * enough; see `redis-admitter.ts`), and a {@link RedisInvalidationBus}, whose key and user messages also drop this
 * instance's leases on that key or user (returned at once; the next call leases under the new limits). Readiness,
 * a log line on each transition and the gauge `gateway_limits_shared` (1 shared / 0 per instance) report the mode.
 * Without: the in-process admitter and a {@link LocalInvalidationBus}, readiness `disabled`, gauge 0.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Registry } from "prom-client";
import { LocalInvalidationBus } from "../cache/local-bus.js";
import { createRedisConnection, type RedisConnection, redisMetrics } from "../cache/redis.js";
import { RedisInvalidationBus } from "../cache/redis-bus.js";
import type { InvalidationBus, InvalidationMessage } from "../cache/types.js";
import type { Clock } from "../time/clock.js";
import { InProcessAdmitter } from "./memory-admitter.js";
import { RedisAdmitter } from "./redis-admitter.js";
import type { Admitter } from "./types.js";

/** The counters' identity (`<scope>:<id>`, as `rules.ts` plans it) of the subject a change message is about. */
function changedCounter(message: InvalidationMessage): string | undefined {
  if (message.kind === "key") return `key:${message.key.token}`;
  if (message.kind === "user") return `user:${message.user.userId}`;
  if (message.kind === "team") return `team:${message.team.teamId}`;
  if (message.kind === "member") return `team_member:${message.member.memberKey}`;
  return undefined; // a deployment marked as ignoring caps holds no counter
}

/** Inputs of {@link createLimits}. */
export interface LimitsOptions {
  /** REDIS_URL; without it limits are kept in process. */
  redisUrl?: string;
  /** Drives windows, periods and reservation expiry (also in Redis mode: passed to the scripts). */
  clock: Clock;
  log: FastifyBaseLogger;
  /** Receives `litellm_redis_latency`, `litellm_redis_fails` and `gateway_limits_shared`. */
  registry: Registry;
  /** Prefix of every Redis key and channel. Default `gw:`. */
  keyPrefix?: string;
  /**
   * Optional: Redis timings, ms: per-command timeout (default 200), reconnect backoff cap (default 2000),
   * degraded-mode probe interval (default 1000), the patient retry of a late admit (default 1000) and how long
   * Redis must leave that link without any reply before it counts as gone (default 3000; see `redis-admitter.ts`).
   */
  redisTimings?: {
    commandTimeoutMs?: number;
    maxReconnectDelayMs?: number;
    probeIntervalMs?: number;
    healthProbeTimeoutMs?: number;
    outageAfterMs?: number;
    /** A lease unused this long is returned, ms (default 1000; docs/leases.md). */
    leaseIdleMs?: number;
    /** How often due leases are looked for and returned, ms of wall time (default 250). */
    leaseSweepIntervalMs?: number;
  };
}

/** Readiness of the limits: `connected` (shared through Redis), `degraded` (per instance), `disabled` (no Redis). */
export interface LimitsReadiness {
  status: "connected" | "degraded" | "disabled";
  detail?: string;
}

/** What the gateway gets: the admitter for the chat route, the bus for the key store, readiness and shutdown. */
export interface Limits {
  admitter: Admitter;
  bus: InvalidationBus;
  /** The Redis connection (REDIS_URL), for other shared counters (authentication failures); undefined without. */
  redis: RedisConnection | undefined;
  readiness(): Promise<LimitsReadiness>;
  /**
   * Returns every lease to Redis (unless `returnLeases` is false: they then expire, as a crashed instance's
   * would), then closes the Redis connections (idempotent). Calls already admitted may still settle in process.
   */
  close(options?: { returnLeases?: boolean }): Promise<void>;
  /** Returns every lease now (what was spent is settled in Redis, the unused part is free again). */
  flush(): Promise<void>;
}

/**
 * Builds the limits. Never throws for an unreachable Redis: it starts degraded and turns shared once Redis
 * answers.
 */
export function createLimits(options: LimitsOptions): Limits {
  const { clock, log, registry } = options;
  const shared = redisMetrics(registry).limitsShared;
  const fallback = new InProcessAdmitter({ clock });
  shared.set(0);
  if (options.redisUrl === undefined || options.redisUrl === "") {
    return {
      admitter: fallback,
      bus: new LocalInvalidationBus(log),
      redis: undefined,
      readiness: async () => ({
        status: "disabled",
        detail: "REDIS_URL not set: limits are kept per instance",
      }),
      close: async () => {},
      flush: async () => {},
    };
  }
  const { healthProbeTimeoutMs, outageAfterMs, leaseIdleMs, leaseSweepIntervalMs, ...timings } =
    options.redisTimings ?? {};
  const connection: RedisConnection = createRedisConnection({
    url: options.redisUrl,
    log,
    registry,
    ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }),
    ...timings,
  });
  connection.onStatusChange((status) => shared.set(status === "connected" ? 1 : 0));
  const admitter = new RedisAdmitter({
    connection,
    clock,
    fallback,
    ...(healthProbeTimeoutMs === undefined ? {} : { probeTimeoutMs: healthProbeTimeoutMs }),
    ...(outageAfterMs === undefined ? {} : { outageAfterMs }),
    ...(leaseIdleMs === undefined ? {} : { leaseIdleMs }),
    ...(leaseSweepIntervalMs === undefined ? {} : { sweepIntervalMs: leaseSweepIntervalMs }),
  });
  const bus = new RedisInvalidationBus(connection, log);
  bus.subscribe((message) => {
    const counter = changedCounter(message);
    if (counter !== undefined) admitter.drop(counter);
  });
  let closing: Promise<void> | undefined;
  return {
    admitter,
    bus,
    redis: connection,
    readiness: async () => {
      const health = connection.health();
      if (health.status === "connected") return { status: "connected" };
      const since = new Date(health.since).toISOString();
      return {
        status: "degraded",
        detail: `redis unavailable since ${since} (${health.reason ?? "unknown"}): limits are per instance`,
      };
    },
    close: (closeOptions) => {
      closing ??= admitter.stop(closeOptions?.returnLeases ?? true).then(() => connection.close());
      return closing;
    },
    flush: () => admitter.flush(),
  };
}
