/**
 * A real Prometheus server (Debian's `prometheus` binary) for tests: free port on 127.0.0.1, its own storage
 * folder, the lifecycle API on (`POST /-/reload`), and small wrappers over its HTTP API (/api/v1/query,
 * /api/v1/alerts, /api/v1/rules).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "../../bench/lib/children.js";

/** One series of an instant query's answer. */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Prometheus's answer envelope (https://prometheus.io/docs/prometheus/latest/querying/api/). */
interface ApiAnswer<T> {
  status: "success" | "error";
  data: T;
  errorType?: string;
  error?: string;
}

export interface PrometheusProcess {
  url: string;
  /** An instant query; resolves with the answer, whether it succeeded or not. */
  query(expr: string): Promise<ApiAnswer<{ resultType: string; result: Sample[] }>>;
  /** Active alerts (pending and firing). */
  alerts(): Promise<{ labels: Record<string, string>; state: string }[]>;
  /** The scrape targets and whether their last scrape worked (`/api/v1/targets`). */
  targets(): Promise<{ job: string; url: string; health: "up" | "down" | "unknown"; lastError: string }[]>;
  /** Names of the loaded rules. */
  ruleNames(): Promise<string[]>;
  /** `POST /-/reload`; resolves with the HTTP status. */
  reload(): Promise<number>;
  /** What the server wrote to stderr (its log), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts `prometheus` on `configFile` with its data in `dir`/data; resolves once `/-/ready` answers 200.
 * @throws Error with the server's log when it exits or is not ready within 15 s.
 */
export async function startPrometheus(configFile: string, dir: string): Promise<PrometheusProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.enable-lifecycle",
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  let spawnError: Error | undefined;
  child.once("error", (error) => {
    spawnError = error;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    log += chunk.toString();
  });
  // events.once rejects on "error" (no binary): that case is reported by the loop below.
  const exited = once(child, "exit").catch(() => undefined);

  const deadline = Date.now() + 15_000;
  for (;;) {
    if (spawnError)
      throw new Error(`prometheus could not start (${spawnError.message}); apt-get install prometheus`);
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${log}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`prometheus was not ready within 15 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const api = async <T>(p: string): Promise<ApiAnswer<T>> =>
    (await fetch(`${url}${p}`)).json() as Promise<ApiAnswer<T>>;
  return {
    url,
    query: (expr) => api(`/api/v1/query?query=${encodeURIComponent(expr)}`),
    alerts: async () =>
      (await api<{ alerts: { labels: Record<string, string>; state: string }[] }>("/api/v1/alerts")).data
        .alerts,
    targets: async () =>
      (
        await api<{
          activeTargets: {
            labels: Record<string, string>;
            scrapeUrl: string;
            health: "up" | "down" | "unknown";
            lastError: string;
          }[];
        }>("/api/v1/targets")
      ).data.activeTargets.map((t) => ({
        job: t.labels.job ?? "",
        url: t.scrapeUrl,
        health: t.health,
        lastError: t.lastError,
      })),
    ruleNames: async () =>
      (await api<{ groups: { rules: { name: string }[] }[] }>("/api/v1/rules")).data.groups.flatMap((g) =>
        g.rules.map((r) => r.name),
      ),
    reload: async () => (await fetch(`${url}/-/reload`, { method: "POST" })).status,
    log: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

/**
 * Writes `<dir>/prometheus.yml` scraping each job's `host:port` (its `/metrics`) every second; returns its path.
 * `jobs` maps job name → target, e.g. `{ gateway: "127.0.0.1:4000" }`; `bearerTokens` maps a job to the bearer
 * token its target wants (the gateway's `METRICS_TOKEN`).
 */
export function writeScrapeConfig(
  dir: string,
  jobs: Record<string, string>,
  extra: string[] = [],
  bearerTokens: Record<string, string> = {},
): string {
  const auth = (job: string) =>
    bearerTokens[job] === undefined ? "" : `, authorization: { credentials: "${bearerTokens[job]}" }`;
  const lines = [
    "global: { scrape_interval: 1s, evaluation_interval: 1s }",
    ...extra,
    "scrape_configs:",
    ...Object.entries(jobs).map(
      ([job, target]) => `  - { job_name: ${job}, static_configs: [{ targets: ["${target}"] }]${auth(job)} }`,
    ),
  ];
  const file = path.join(dir, "prometheus.yml");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}
