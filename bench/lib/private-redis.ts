/**
 * Helpers shared by the benchmarks that need Redis or the gateway's logger: a private `redis-server` on a free
 * port with nothing kept on disk (so `INFO commandstats` counts only the benchmark's own clients), and a
 * logger that drops everything.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { FastifyBaseLogger } from "fastify";
import { Redis } from "ioredis";
import { freePort } from "./children.js";

/** A running private Redis: its URL, a connected client, and `stop()` (client and server). */
export interface PrivateRedis {
  url: string;
  client: Redis;
  server: ChildProcess;
  stop(): void;
}

/**
 * Starts Debian's `redis-server` on a free port (`--save ""`, `--appendonly no`) and resolves once it answers
 * PING (ioredis retries the connection while the server starts, up to ~5 s).
 * @throws Error when `redis-server` is missing or never answers.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const server = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: (n) => (n > 50 ? null : 100) });
  client.on("error", () => {});
  const stop = () => {
    client.disconnect();
    server.kill("SIGTERM");
  };
  try {
    await client.ping();
  } catch (error) {
    stop();
    throw error;
  }
  return { url, client, server, stop };
}

/** A fastify-compatible logger that writes nothing (the limits code under measurement logs through it). */
export const silentLogger: FastifyBaseLogger = {
  level: "silent",
  fatal() {},
  error() {},
  warn() {},
  info() {},
  debug() {},
  trace() {},
  silent() {},
  child: () => silentLogger,
} as unknown as FastifyBaseLogger;
