/**
 * `scripts/smoke-test.sh` against the rehearsed stack's published ports, with the master key and trace keys the
 * program generated (read off the declarations) and the operator's model; the script's own `.env` lookup is
 * off (`--env-file /dev/null`), so nothing of the checkout's .env leaks in.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "../../../infra/files.js";
import type { StackDescription } from "../declared.js";
import { OPERATOR_MODEL } from "../operator.js";
import { declared, envOf, gatewayOf, publishedUrl } from "./access.js";

/**
 * Runs the smoke test, its output going to this process's stdout as it comes.
 * @returns its exit status and everything it printed.
 */
export function runSmokeTest(stack: StackDescription): Promise<{ status: number; output: string }> {
  const gateway = gatewayOf(stack);
  const gatewayEnv = envOf(declared(stack, "gateway"));
  const args = [
    path.join(REPO_ROOT, "scripts/smoke-test.sh"),
    "--env-file",
    "/dev/null",
    "--gateway-url",
    gateway.url,
    "--key",
    gateway.masterKey,
    "--model",
    OPERATOR_MODEL.name,
    "--trace-url",
    publishedUrl(stack, "trace-web"),
    "--trace-public-key",
    gatewayEnv.TRACE_PUBLIC_KEY ?? "",
    "--trace-secret-key",
    gatewayEnv.TRACE_SECRET_KEY ?? "",
    "--metrics-url",
    publishedUrl(stack, "metrics"),
    "--wait",
    "60",
  ];
  return new Promise((resolve) => {
    const child = spawn("bash", args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", (e) => resolve({ status: 1, output: `${output}${String(e)}` }));
    child.once("close", (code) => resolve({ status: code ?? 1, output }));
  });
}
