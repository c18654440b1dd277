/** The environment the benchmarks start a gateway child with. */
import { join } from "node:path";
import { repoRoot } from "./children.js";

/** What a benchmark gateway needs: its port, master key and the fake upstream (base URL ending in /v1, key). */
export interface BenchGatewaySettings {
  port: number;
  masterKey: string;
  upstreamUrl: string;
  upstreamKey: string;
  /** GATEWAY_REDIS_KEY_PREFIX (default: the gateway's own, `gw:`). */
  redisKeyPrefix?: string;
  /** GATEWAY_WORKERS (default 1: one process, as the targets compare one process with one process). */
  workers?: number;
  /** GATEWAY_CONFIG (default this checkout's bench/gateway.yaml). */
  config?: string;
}

/**
 * `process.env` plus the gateway's settings: bench/gateway.yaml (model `bench` at the fake upstream), log level
 * warn, GATEWAY_WORKERS, and DATABASE_URL / REDIS_URL set (possibly empty) so that a developer's .env cannot
 * switch the mode behind the benchmark's back.
 */
export function benchGatewayEnv(s: BenchGatewaySettings, databaseUrl = "", redisUrl = ""): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(s.port),
    HOST: "127.0.0.1",
    GATEWAY_CONFIG: s.config ?? join(repoRoot, "bench", "gateway.yaml"),
    GATEWAY_WORKERS: String(s.workers ?? 1),
    ...(s.redisKeyPrefix === undefined ? {} : { GATEWAY_REDIS_KEY_PREFIX: s.redisKeyPrefix }),
    GATEWAY_MASTER_KEY: s.masterKey,
    BENCH_UPSTREAM_API_BASE: s.upstreamUrl,
    BENCH_UPSTREAM_API_KEY: s.upstreamKey,
    LOG_LEVEL: "warn",
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
  };
}
