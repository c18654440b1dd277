/** The Redis connection factory: redaction, shared metrics, fail-fast behaviour against an unreachable server. */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { freePort } from "../../../../bench/lib/children.js";
import {
  createRedisConnection,
  redactRedisUrl,
  redisMetrics,
} from "../../../../services/gateway/src/cache/redis.js";
import { captureLogger, REDIS_URL, uniquePrefix, waitFor } from "../../../helpers/redis.js";

/** A port with nothing listening on it. */
const closedPort = freePort;

describe("redactRedisUrl", () => {
  it("hides passwords and keeps what helps an operator", () => {
    expect(redactRedisUrl("redis://:s3cret@cache:6379/0")).toBe("redis://:***@cache:6379/0");
    expect(redactRedisUrl("rediss://default:s3cret@cache:6380")).toBe("rediss://default:***@cache:6380");
    expect(redactRedisUrl("redis://s3cret@cache:6379")).toBe("redis://***@cache:6379");
    expect(redactRedisUrl("redis://cache:6379")).toBe("redis://cache:6379");
    expect(redactRedisUrl("not a url s3cret")).toBe("<invalid redis url>");
  });
});

describe("redisMetrics", () => {
  it("registers LiteLLM's names once per registry and returns the same metrics on later calls", async () => {
    const registry = new Registry();
    const first = redisMetrics(registry);
    expect(redisMetrics(registry).latency).toBe(first.latency);
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual(["gateway_limits_shared", "litellm_redis_fails", "litellm_redis_latency"]);
  });
});

describe("createRedisConnection", () => {
  it("against an unreachable server: starts degraded, logs once without the password, commands fail fast", async () => {
    const log = captureLogger();
    const connection = createRedisConnection({
      url: `redis://:s3cret-pw@127.0.0.1:${await closedPort()}`,
      log,
      registry: new Registry(),
      maxReconnectDelayMs: 100,
    });
    try {
      await waitFor("a failure logged", () => log.lines.some((l) => l.level === "warn"));
      expect(connection.isConnected()).toBe(false);
      expect(connection.health().status).toBe("degraded");
      await expect(connection.client.get("x")).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 300)); // several reconnect attempts
      const warnings = log.lines.filter((l) => l.level === "warn");
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.text).toContain("redis://:***@127.0.0.1");
      for (const line of log.lines) expect(line.text).not.toContain("s3cret-pw");
    } finally {
      await connection.close();
    }
  });

  it("connects, reports connected and records latency under the key prefix it was given", async () => {
    const registry = new Registry();
    const prefix = uniquePrefix("conn");
    const connection = createRedisConnection({
      url: REDIS_URL,
      log: captureLogger(),
      registry,
      keyPrefix: prefix,
    });
    try {
      await waitFor("connected", () => connection.isConnected());
      expect(connection.keyPrefix).toBe(prefix);
      connection.observe("admit", 0.0002);
      expect(await registry.getSingleMetricAsString("litellm_redis_latency")).toContain(
        'litellm_redis_latency_count{operation="admit"} 1',
      );
      connection.reportFailure("admit", new Error("Command timed out"));
      expect(connection.health()).toMatchObject({ status: "degraded", reason: "admit: Command timed out" });
      await waitFor("probe reconnects", () => connection.isConnected());
    } finally {
      await connection.close();
    }
  });

  it("only counts a failure no caller waits on while the command link is up (a late reply is no outage)", async () => {
    const registry = new Registry();
    const connection = createRedisConnection({
      url: REDIS_URL,
      log: captureLogger(),
      registry,
      keyPrefix: uniquePrefix("late"),
    });
    try {
      await waitFor("connected", () => connection.isConnected());
      connection.reportFailureIfLinkDown("settle", new Error("Command timed out"));
      expect(connection.health().status).toBe("connected");
      expect(await registry.getSingleMetricAsString("litellm_redis_fails")).toContain(
        'litellm_redis_fails{operation="settle"} 1',
      );
    } finally {
      await connection.close();
    }
  });
});
