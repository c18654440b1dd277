/**
 * The operator's `.env` at the repository root, read by a gateway run from source (`npm start`, `npm run dev`).
 * In the image there is no such file; the stack hands every variable to the container itself.
 *
 * Variables already set in the process environment win over the file. One rule is the file's own: the file
 * is shared with the stack, whose generated `TRACE_PUBLIC_KEY`/`TRACE_SECRET_KEY` are the keys of the stack's
 * Langfuse project. Taken from the file, those keys turn tracing on only together with a trace host
 * (`TRACE_HOST`, `LANGFUSE_BASE_URL` or `LANGFUSE_HOST`, from the file or the environment); without one, the
 * gateway from source runs with tracing off and says so. Set in the environment itself (as the stack sets them
 * in its containers), a partial set is still refused by `readTraceSettings`.
 */
import { existsSync, readFileSync } from "node:fs";
import { parse } from "dotenv";

const HOSTS = ["TRACE_HOST", "LANGFUSE_BASE_URL", "LANGFUSE_HOST"] as const;
const KEYS = ["TRACE_PUBLIC_KEY", "TRACE_SECRET_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"] as const;
const given = (v: string | undefined) => v !== undefined && v !== "" && v !== "replace-me";

/**
 * Copies the variables of the `.env` file at `path` into `env` where `env` does not have them yet, and applies
 * the trace-key rule above. A missing file changes nothing.
 * @returns lines worth printing at start-up (e.g. that the file's trace keys were left unused), possibly none.
 * @throws the file system's error when the file exists but cannot be read.
 */
export function loadOperatorEnv(path: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (!existsSync(path)) return [];
  const file = parse(readFileSync(path));
  const taken: string[] = [];
  for (const [name, value] of Object.entries(file)) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    taken.push(name);
  }
  const hasHost = HOSTS.some((name) => given(env[name]));
  const fileKeys = KEYS.filter((name) => taken.includes(name) && given(env[name]));
  if (hasHost || fileKeys.length === 0) return [];
  for (const name of fileKeys) delete env[name];
  return [
    `tracing off: ${path} has ${fileKeys.join(", ")} (the stack's Langfuse project keys) but no TRACE_HOST; ` +
      "to trace from source, set TRACE_HOST to your Langfuse (e.g. http://localhost:3000 with the stack running)",
  ];
}

/**
 * The operator's `.env` a from-source gateway reads: `GATEWAY_ENV_FILE` when set (an empty value: none, as test
 * harnesses and benchmarks want, whatever a checkout's `.env` holds), else `<repoRoot>.env`.
 * @returns an absolute or repo-relative file path, or undefined for none.
 */
export function operatorEnvFile(repoRoot: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = env.GATEWAY_ENV_FILE;
  if (chosen === undefined) return `${repoRoot}.env`;
  return chosen === "" ? undefined : chosen;
}
