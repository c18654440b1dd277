/**
 * `npm run e2e`: the whole platform from this checkout on this machine (test/e2e/platform.ts says what is
 * real and what is a contract fake), `scripts/smoke-test.sh` against it with its output printed, the
 * console's `/_health` and the scanner's `/health`, then everything stopped, also on failure and on Ctrl-C.
 * Exits with the smoke test's status (1 when it passed but a health check failed, 2 when the platform did not
 * start). Progress lines go to stderr. `npm run e2e -- --help` for the flags.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "../../bench/lib/children.js";
import { E2E_MODEL, type Platform, startPlatform } from "./platform.js";

const USAGE = `Usage: npm run e2e -- [options]

Starts the platform from the checkout (gateway, console, scanner with the tiny model, Postgres, Redis, a real
Prometheus; contract fakes of the OpenAI-compatible upstream, Langfuse, Presidio and LibreChat's MongoDB), runs
scripts/smoke-test.sh against it, checks the console's /_health and the scanner's /health, stops everything
and exits with the smoke test's status.

Options:
  --keep              leave the platform running after the checks (prints its URLs; Ctrl-C stops it)
  --wait <seconds>    how long the smoke test polls for the trace, the counter and the decision (default 20)
  -h, --help          show this help

Environment: TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres; a fresh database is
created on it and dropped afterwards), REDIS_URL (default redis://127.0.0.1:6379; an empty database 1..15 is
used).`;

const progress = (line: string) => process.stderr.write(`e2e: ${line}\n`);

/** Runs scripts/smoke-test.sh against the platform, its output going straight to ours; resolves its status. */
function smokeTest(platform: Platform, waitSeconds: string): Promise<number> {
  const args = [
    path.join(repoRoot, "scripts/smoke-test.sh"),
    "--env-file",
    "/dev/null",
    "--gateway-url",
    platform.gatewayUrl,
    "--key",
    platform.masterKey,
    "--model",
    E2E_MODEL,
    "--trace-url",
    platform.traceUrl,
    "--trace-public-key",
    platform.tracePublicKey,
    "--trace-secret-key",
    platform.traceSecretKey,
    "--metrics-url",
    platform.metricsUrl,
    "--wait",
    waitSeconds,
  ];
  return new Promise((resolve) => {
    const child = spawn("bash", args, { stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", () => resolve(1));
    child.once("exit", (code) => resolve(code ?? 1));
  });
}

/** GET `url`; prints `<what>: <status> <body>` and resolves whether it answered 200. */
async function healthCheck(what: string, url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    const body = (await res.text()).trim().slice(0, 300);
    console.log(`${what}: ${res.status === 200 ? "ok" : "FAILED"} (${res.status} ${body})`);
    return res.status === 200;
  } catch (error) {
    console.log(`${what}: FAILED (${error instanceof Error ? error.message : String(error)})`);
    return false;
  }
}

async function main(): Promise<number> {
  let values: { keep: boolean; wait: string; help: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        keep: { type: "boolean", default: false },
        wait: { type: "string", default: "20" },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`e2e: ${error instanceof Error ? error.message : String(error)} (see --help)\n`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!/^\d+$/.test(values.wait)) {
    process.stderr.write(`e2e: --wait takes whole seconds, got ${values.wait}\n`);
    return 2;
  }

  let platform: Platform | undefined;
  const interrupt = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (interrupt.signal.aborted) return;
      progress(`${signal}: stopping everything`);
      interrupt.abort();
      // While starting, startPlatform stops what had started and rejects; afterwards stop here.
      if (platform) void platform.stop().finally(() => process.exit(130));
    });
  }

  const started = Date.now();
  try {
    platform = await startPlatform({
      postgresAdminUrl: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      progress,
      signal: interrupt.signal,
    });
  } catch (error) {
    if (interrupt.signal.aborted) return 130;
    progress(`the platform did not start: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  progress(
    `everything is up after ${((Date.now() - started) / 1000).toFixed(1)} s; running scripts/smoke-test.sh`,
  );

  try {
    const status = await smokeTest(platform, values.wait);
    const consoleOk = await healthCheck("console /_health", `${platform.consoleUrl}/_health`);
    const scannerOk = await healthCheck("scanner /health", `${platform.scannerUrl}/health`);
    for (const service of platform.services) {
      const { exitCode, signalCode } = service.child;
      if (exitCode !== null || signalCode !== null) {
        progress(`${service.name} exited during the run (${signalCode ?? exitCode}):\n${service.output()}`);
      }
    }
    if (values.keep && !interrupt.signal.aborted) {
      progress(
        [
          "--keep: the platform stays up; Ctrl-C stops it",
          `  gateway    ${platform.gatewayUrl}  (master key ${platform.masterKey})`,
          `  console    ${platform.consoleUrl}`,
          `  scanner    ${platform.scannerUrl}`,
          `  Prometheus ${platform.metricsUrl}`,
          `  Langfuse   ${platform.traceUrl}  (fake; ${platform.tracePublicKey} / ${platform.traceSecretKey})`,
          `  upstream   ${platform.upstreamUrl}  (fake)`,
        ].join("\n"),
      );
      await new Promise(() => {});
    }
    return status !== 0 ? status : consoleOk && scannerOk ? 0 : 1;
  } finally {
    if (!interrupt.signal.aborted) {
      progress("stopping everything");
      await platform.stop();
      progress(`done after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }
}

process.exitCode = await main();
