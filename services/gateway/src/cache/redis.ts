/**
 * The gateway's Redis connection (ioredis 5) with a health state the hot path can read without waiting.
 *
 * Fail-fast settings (ioredis `RedisOptions`, https://github.com/redis/ioredis/blob/main/lib/redis/RedisOptions.ts):
 * `enableOfflineQueue: false` (a command issued while disconnected is rejected at once instead of queued),
 * `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false` (commands in flight when the link drops
 * are rejected, not replayed), `commandTimeout` (a command without a reply is rejected after that many ms) and
 * a bounded exponential reconnect backoff that never gives up.
 *
 * Auto-pipelining stays off on purpose. With it, at saturation in `npm run bench`, Redis's own CPU per request
 * halved (89–118 µs → 46–52 µs, A/B runs on one machine) and the gateway's was unchanged. But ioredis sends an
 * auto-pipeline only after the previous one has all its replies, and starts a command's `commandTimeout` only
 * when it is sent. So while Redis stalls, an admit queued behind a stalled pipeline waits two timeouts before
 * the fallback admits it: measured 202 ms against 101 ms with a 100 ms timeout, through the stalling proxy of
 * test/services/gateway/limits/outage.test.ts.
 *
 * Health: `connected` after ioredis' `ready` event, `degraded` after `close`/`error` or when a caller reports a
 * failed command ({@link RedisConnection.reportFailure}, e.g. a timeout on a link that still looks open). While
 * degraded and the link is up, a background PING probe decides when to go back to `connected`. Transitions are
 * logged once each (URL redacted) and counted in metrics.
 */
import type { FastifyBaseLogger } from "fastify";
import { Redis, type RedisOptions } from "ioredis";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** `connected`: commands go to Redis. `degraded`: Redis is unreachable or failing; callers use a fallback. */
export type RedisStatus = "connected" | "degraded";

/** The current health of a {@link RedisConnection}. */
export interface RedisHealth {
  status: RedisStatus;
  /** Epoch ms (wall clock) of the last transition. */
  since: number;
  /** Why it is degraded (an error message, never a URL or password), or `connecting` before the first connect. */
  reason?: string;
}

/** Metrics shared by the Redis-backed parts of the gateway, registered once per prom-client registry. */
export interface RedisMetrics {
  /**
   * `litellm_redis_latency`: seconds per Redis call, label `operation` (admit, settle, publish, ping). Name from
   * LiteLLM's "Monitor System Health" metrics (docs/my-website/docs/proxy/prometheus.md).
   */
  latency: Histogram<"operation">;
  /** `litellm_redis_fails`: failed Redis calls (errors and timeouts), label `operation`. Same source. */
  fails: Counter<"operation">;
  /** `gateway_limits_shared`: 1 while limits are shared through Redis, 0 while kept per instance. */
  limitsShared: Gauge;
}

const latencyBuckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

function getOrCreate<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** Returns the Redis metrics on `registry`, creating them on first use (safe to call from several components). */
export function redisMetrics(registry: Registry): RedisMetrics {
  const registers = [registry];
  return {
    latency: getOrCreate(
      registry,
      "litellm_redis_latency",
      () =>
        new Histogram({
          name: "litellm_redis_latency",
          help: "Latency of Redis calls in seconds",
          labelNames: ["operation"],
          buckets: latencyBuckets,
          registers,
        }),
    ),
    fails: getOrCreate(
      registry,
      "litellm_redis_fails",
      () =>
        new Counter({
          name: "litellm_redis_fails",
          help: "Number of failed Redis calls (errors and timeouts)",
          labelNames: ["operation"],
          registers,
        }),
    ),
    limitsShared: getOrCreate(
      registry,
      "gateway_limits_shared",
      () =>
        new Gauge({
          name: "gateway_limits_shared",
          // With several workers: 0 as soon as one of them keeps its limits in process.
          aggregator: "min",
          help: "1 when rate limits and budgets are shared through Redis, 0 when kept per gateway instance",
          registers,
        }),
    ),
  };
}

/**
 * A Redis URL safe to log: the password (and a lone username used as password) replaced by `***`.
 * Returns `<invalid redis url>` when the string does not parse, so a malformed secret never reaches a log.
 */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    else if (parsed.username !== "") parsed.username = "***";
    return parsed.toString();
  } catch {
    return "<invalid redis url>";
  }
}

/** Options for {@link createRedisConnection}. */
export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  url: string;
  log: FastifyBaseLogger;
  registry: Registry;
  /** Prepended to every key and channel this gateway uses (tests isolate by prefix). Default `gw:`. */
  keyPrefix?: string;
  /** Per-command timeout, ms. Default 200. */
  commandTimeoutMs?: number;
  /** TCP connect timeout, ms. Default 1000. */
  connectTimeoutMs?: number;
  /** Upper bound of the reconnect backoff, ms (50 ms doubling up to this). Default 2000. */
  maxReconnectDelayMs?: number;
  /** Interval of the background PING while degraded with an open link, ms. Default 1000. */
  probeIntervalMs?: number;
}

/** A Redis client plus its health, metrics and key prefix. */
export interface RedisConnection {
  /** The command client (fail-fast). Use {@link RedisConnection.isConnected} before a hot-path call. */
  readonly client: Redis;
  /** Prefix for keys and channels, e.g. `gw:`. */
  readonly keyPrefix: string;
  /** The URL with its password redacted. */
  readonly displayUrl: string;
  readonly metrics: RedisMetrics;
  /** True while connected: a cheap synchronous check for the hot path. */
  isConnected(): boolean;
  health(): RedisHealth;
  /** Registers a listener called on every transition. */
  onStatusChange(listener: (status: RedisStatus) => void): void;
  /** Records a successful call's latency (seconds) under `operation`. */
  observe(operation: string, seconds: number): void;
  /** Records a failed call, marks the connection degraded and starts probing. Never throws. */
  reportFailure(operation: string, error: unknown): void;
  /**
   * Records a failed call that no caller waits on (publish, settle): while the command link is still up
   * (ioredis status `ready`) it is only counted, since a late reply there is no evidence of an outage (the
   * event loop may just have been busy); on a link that is down it is {@link RedisConnection.reportFailure}.
   * Never throws.
   */
  reportFailureIfLinkDown(operation: string, error: unknown): void;
  /**
   * A second connection with the same address (for pub/sub, which takes a connection over). Its commands are
   * queued while disconnected, however long (a SUBSCRIBE issued while Redis is down is sent once it answers),
   * and it resubscribes after a reconnect.
   */
  duplicate(name: string): Redis;
  /** Closes the command client and every duplicate; resolves within ~1 s even when Redis is gone. */
  close(): Promise<void>;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Closes a client politely (QUIT) when possible, else drops the socket. */
async function closeClient(client: Redis): Promise<void> {
  if (client.status === "end") return;
  if (client.status === "ready") {
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 1000).unref());
    await Promise.race([
      client.quit().then(
        () => undefined,
        () => undefined,
      ),
      timeout,
    ]);
  }
  client.disconnect(false);
}

/**
 * Opens a Redis connection (asynchronously; the returned handle starts `degraded` with reason `connecting`).
 * Never throws for an unreachable server: it keeps reconnecting in the background.
 */
export function createRedisConnection(options: RedisConnectionOptions): RedisConnection {
  const { log } = options;
  const displayUrl = redactRedisUrl(options.url);
  const metrics = redisMetrics(options.registry);
  const commandTimeout = options.commandTimeoutMs ?? 200;
  const maxDelay = options.maxReconnectDelayMs ?? 2000;
  const probeInterval = options.probeIntervalMs ?? 1000;
  const redisOptions: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
    connectionName: "gateway",
  };
  const client = new Redis(options.url, redisOptions);
  const duplicates: Redis[] = [];
  const listeners: Array<(status: RedisStatus) => void> = [];
  let health: RedisHealth = { status: "degraded", since: Date.now(), reason: "connecting" };
  let everConnected = false;
  let probe: NodeJS.Timeout | undefined;
  let closed = false;

  const transition = (status: RedisStatus, reason?: string) => {
    if (closed) return;
    if (health.status === status) {
      if (status === "degraded" && reason !== undefined && health.reason === "connecting") {
        // First failure before any successful connect: say so once.
        health = { status, since: health.since, reason };
        log.warn(
          { redis: displayUrl, reason },
          "redis unreachable: limits are per instance until it answers",
        );
      }
      return;
    }
    health = reason === undefined ? { status, since: Date.now() } : { status, since: Date.now(), reason };
    if (status === "connected") {
      stopProbe();
      log.info(
        { redis: displayUrl },
        everConnected ? "redis back: limits are shared again" : "redis connected: limits are shared",
      );
      everConnected = true;
    } else {
      log.warn({ redis: displayUrl, reason }, "redis degraded: limits are per instance until it returns");
    }
    for (const listener of listeners) listener(status);
  };

  const stopProbe = () => {
    if (probe !== undefined) clearInterval(probe);
    probe = undefined;
  };

  const startProbe = () => {
    if (probe !== undefined || closed) return;
    probe = setInterval(() => {
      // A closed link is reconnected by ioredis itself and reported through `ready`.
      if (client.status !== "ready") return;
      const started = performance.now();
      client.ping().then(
        () => {
          metrics.latency.observe({ operation: "ping" }, (performance.now() - started) / 1000);
          transition("connected");
        },
        (error: unknown) => {
          metrics.fails.inc({ operation: "ping" });
          log.debug({ err: errorMessage(error) }, "redis probe failed");
        },
      );
    }, probeInterval);
    probe.unref();
  };

  const reportFailure = (operation: string, error: unknown): void => {
    metrics.fails.inc({ operation });
    transition("degraded", `${operation}: ${errorMessage(error)}`);
    startProbe();
  };

  client.on("ready", () => transition("connected"));
  client.on("error", (error: unknown) => transition("degraded", errorMessage(error)));
  client.on("close", () => transition("degraded", "connection closed"));

  return {
    client,
    keyPrefix: options.keyPrefix ?? "gw:",
    displayUrl,
    metrics,
    isConnected: () => health.status === "connected",
    health: () => health,
    onStatusChange: (listener) => {
      listeners.push(listener);
    },
    observe: (operation, seconds) => metrics.latency.observe({ operation }, seconds),
    reportFailure,
    reportFailureIfLinkDown: (operation, error) => {
      if (client.status === "ready") metrics.fails.inc({ operation });
      else reportFailure(operation, error);
    },
    duplicate: (name) => {
      const copy = client.duplicate({
        enableOfflineQueue: true,
        maxRetriesPerRequest: null,
        commandTimeout: undefined,
        connectionName: `gateway-${name}`,
      });
      copy.on("error", (error: unknown) => log.debug({ err: errorMessage(error), connection: name }));
      duplicates.push(copy);
      return copy;
    },
    close: async () => {
      if (!closed) health = { status: "degraded", since: Date.now(), reason: "closed" };
      closed = true;
      stopProbe();
      await Promise.all([client, ...duplicates].map(closeClient));
    },
  };
}
