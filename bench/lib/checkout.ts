/** The checkouts a benchmark runs: building this one's gateway, naming another's commit. */
import { execFileSync } from "node:child_process";
import { repoRoot } from "./children.js";

/**
 * Builds the gateway of this checkout (npm start and the image run dist/server.js).
 * @throws with the end of the build's output when it fails.
 */
export function buildGateway(): void {
  try {
    execFileSync("npm", ["run", "build", "-w", "services/gateway"], { cwd: repoRoot, encoding: "utf8" });
  } catch (error) {
    const out = error as { stdout?: string; stderr?: string };
    throw new Error(
      `npm run build -w services/gateway failed (or pass --from-source):\n${`${out.stdout ?? ""}${out.stderr ?? ""}`.trim().slice(-2000)}`,
    );
  }
}

/** The commit of a checkout, for the results file (`unknown` when git cannot tell). */
export function commitOf(dir: string): string {
  try {
    const line = execFileSync("git", ["-C", dir, "log", "-1", "--format=%h %s"], { encoding: "utf8" }).trim();
    return line.length > 70 ? `${line.slice(0, 69)}…` : line;
  } catch {
    return "unknown";
  }
}

/**
 * The version a node binary reports (`v20.20.2`), for the results file.
 * @throws when `node` cannot be run, naming it (a wrong `--baseline-node` path).
 */
export function nodeVersion(node: string): string {
  try {
    return execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  } catch (error) {
    throw new Error(`${node} --version failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The gateway entry a benchmark starts: TypeScript through tsx when `fromSource`, else
 * `services/gateway/dist/server.js` (what `npm start` and the image run), built first.
 * @throws when the build fails (buildGateway's message).
 */
export function gatewayEntry(fromSource: boolean, say: (line: string) => void): string {
  if (fromSource) return "services/gateway/src/server.ts";
  say("building services/gateway (npm run build -w services/gateway), as npm start and the image run it");
  buildGateway();
  return "services/gateway/dist/server.js";
}
