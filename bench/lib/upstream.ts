/**
 * The benchmarks' OpenAI-compatible fake (`bench/upstream.ts`) in a process of its own, started and awaited in
 * one call.
 */
import { readyLine, type Service, spawnService } from "./children.js";

/** A started upstream fake: its process and where it listens. */
export interface BenchUpstream {
  service: Service;
  /** Base URL with `/v1`, e.g. `http://127.0.0.1:4321/v1`. */
  url: string;
  port: number;
}

/**
 * Starts `bench/upstream.ts` requiring Bearer `apiKey` (BENCH_UPSTREAM_API_KEY) and pushes its process onto
 * `services` (so the caller's clean-up stops it), then waits for its ready line.
 * @throws when the process exits or prints no ready line within 30 s.
 */
export async function spawnUpstream(services: Service[], apiKey: string): Promise<BenchUpstream> {
  const service = spawnService("upstream", {
    entry: "bench/upstream.ts",
    env: { ...process.env, BENCH_UPSTREAM_API_KEY: apiKey },
  });
  services.push(service);
  const { url, port } = await readyLine<{ ready: true; url: string; port: number }>(service);
  return { service, url, port };
}
