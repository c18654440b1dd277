/**
 * `npm start` and `npm run dev`: the gateway and the key console from the checkout, as two processes, until
 * Ctrl-C or SIGTERM (run with `node --import tsx scripts/lib/run-local.ts [--dev]`).
 *
 * - gateway: `services/gateway/dist/server.js` (`--dev`: its TypeScript source) on PORT (default 4000; `.env`'s
 *   PORT counts). Without DATABASE_URL it runs on the embedded database in `.data/postgres`
 *   (GATEWAY_EMBEDDED_DB; see the gateway's `db/embedded.ts`).
 * - console: `services/console/dist/server/server.js` (`--dev`: its source) on CONSOLE_PORT (default 3001),
 *   pointed at this gateway; without MONGO_URI in operator-only mode (sign in with the master key).
 *
 * Each child runs in its own process group and gets exactly one SIGTERM from here when this process is asked
 * to stop (a Ctrl-C reaching the whole terminal group would otherwise reach the children twice, through npm
 * too). When one child ends on its own, the other is stopped and this process exits with the first one's status.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "dotenv";
import { REPO_ROOT } from "../../infra/files.js";

const dev = process.argv.includes("--dev");
const envFile = path.join(REPO_ROOT, ".env");
const fromFile = existsSync(envFile) ? parse(readFileSync(envFile)) : {};
/** A setting from the environment, else from `.env`, else undefined (empty counts as unset). */
const setting = (name: string) => process.env[name] || fromFile[name] || undefined;

const gatewayPort = setting("PORT") ?? "4000";
const consolePort = setting("CONSOLE_PORT") ?? "3001";
const consoleUrl = setting("CONSOLE_PUBLIC_URL") ?? `http://localhost:${consolePort}`;

const node = (entry: string) => (dev ? ["--conditions=development", "--import", "tsx", entry] : [entry]);

const children: Array<{ name: string; child: ChildProcess }> = [];
let stopping = false;
let status: number | undefined;

function start(name: string, entry: string, env: NodeJS.ProcessEnv): void {
  const child = spawn(process.execPath, node(path.join(REPO_ROOT, entry)), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: "inherit",
    detached: true,
  });
  children.push({ name, child });
  child.on("exit", (code, signal) => {
    const own = code ?? (signal === null ? 1 : 128);
    if (!stopping) {
      process.stderr.write(`${name} stopped (${signal ?? `exit status ${code}`}); stopping the rest\n`);
      status ??= own === 0 ? 1 : own;
      stop();
    } else if (own !== 0) status ??= own;
    if (children.every((c) => c.child.exitCode !== null || c.child.signalCode !== null)) {
      process.exit(status ?? 0);
    }
  });
}

function stop(): void {
  if (stopping) return;
  stopping = true;
  for (const { child } of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  }
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, stop);

start("gateway", dev ? "services/gateway/src/server.ts" : "services/gateway/dist/server.js", {
  PORT: gatewayPort,
  GATEWAY_EMBEDDED_DB: setting("GATEWAY_EMBEDDED_DB") ?? path.join(REPO_ROOT, ".data", "postgres"),
  CONSOLE_PUBLIC_URL: consoleUrl,
});
start("console", dev ? "services/console/server/server.ts" : "services/console/dist/server/server.js", {
  PORT: consolePort,
  PUBLIC_URL: consoleUrl,
  GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
  GATEWAY_PUBLIC_URL: setting("GATEWAY_PUBLIC_URL") ?? `http://localhost:${gatewayPort}`,
});
