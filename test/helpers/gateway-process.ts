/** The gateway as a separate process (`services/gateway/src/server.ts` under tsx), as `npm run dev` starts it. */
import { type ChildProcess, spawn } from "node:child_process";

const serverEntry = new URL("../../services/gateway/src/server.ts", import.meta.url).pathname;

/** A free TCP port on 127.0.0.1 (free when asked; the caller binds it soon after): the bench's own. */
export { freePort } from "../../bench/lib/children.js";

/** A started gateway process and everything it printed so far (stdout and stderr together). */
export interface GatewayProcess {
  child: ChildProcess;
  output: () => string;
}

/**
 * Starts the gateway with only PATH, HOST=127.0.0.1, LOG_LEVEL=info and `env` in its environment; it reads no
 * `.env` (GATEWAY_ENV_FILE empty) unless `env` names one, so a checkout's `.env` cannot change a test.
 */
export function startGatewayProcess(env: Record<string, string>): GatewayProcess {
  let out = "";
  const child = spawn(process.execPath, ["--conditions=development", "--import", "tsx", serverEntry], {
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", LOG_LEVEL: "info", GATEWAY_ENV_FILE: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return { child, output: () => out };
}

/** Resolves once `url`/health/liveliness answers 200; throws after about 20 s. */
export async function waitLive(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`${url}/health/liveliness`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway at ${url} did not become live`);
}

/** The JSON log lines (pino) the process printed so far; other lines are skipped. */
export function logLines(output: string): Array<Record<string, unknown>> {
  return output.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
