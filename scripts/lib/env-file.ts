/**
 * Makes the operator's `.env` (run with tsx: `tsx scripts/lib/env-file.ts [--env FILE] [--example FILE]`).
 *
 * - No `.env` yet: a copy of `.env.example`.
 * - A variable of `.env.example` missing from `.env` is appended with its example value.
 * - Every secret the stack knows (infra/secrets.ts SECRET_SPECS) whose value is empty or `replace-me` gets a
 *   random value of the shape the stack would generate (same length, prefix, or hex size).
 * - Every other line (values already set, comments, order) stays as it was. Running it again changes nothing.
 *
 * Prints one line naming the file and the variables it filled (never their values). Exit status 0, or 1 with a
 * message when `.env.example` is missing.
 */
import { randomBytes, randomInt } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse as parseDotenv } from "dotenv";
import { PLACEHOLDER } from "../../infra/config.js";
import { REPO_ROOT } from "../../infra/files.js";
import { SECRET_SPECS } from "../../infra/secrets.js";

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

type Spec = (typeof SECRET_SPECS)[keyof typeof SECRET_SPECS];

/** A random value shaped like the stack's generated one: `prefix` + `length` letters/digits, or hex. */
export function generateSecret(spec: Spec): string {
  if (spec.kind === "hex") return randomBytes(spec.bytes).toString("hex");
  let out = "";
  for (let i = 0; i < spec.length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return `${"prefix" in spec ? spec.prefix : ""}${out}`;
}

/** A `KEY=value` line (optionally `export KEY=value`): group 1 is the name. */
const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/;

/**
 * The new text of `.env` from its current text (undefined when absent) and `.env.example`'s.
 * @returns the text and the names of the variables it added or filled.
 */
export function mergeEnv(
  current: string | undefined,
  example: string,
): { text: string; filled: string[]; added: string[] } {
  const secrets = new Map<string, Spec>(Object.values(SECRET_SPECS).map((s) => [s.env, s]));
  const lines = (current ?? example).split("\n");
  const present = new Set(lines.map((l) => ASSIGNMENT.exec(l)?.[1]).filter((k) => k !== undefined));
  const missing = example.split("\n").filter((l) => {
    const key = ASSIGNMENT.exec(l)?.[1];
    return key !== undefined && !present.has(key);
  });
  const added = missing.map((l) => ASSIGNMENT.exec(l)?.[1] ?? "");
  if (missing.length > 0) {
    if (lines.at(-1) === "") lines.pop();
    lines.push("", "# Added from .env.example by scripts/lib/env-file.ts", ...missing, "");
  }
  const filled: string[] = [];
  const text = lines
    .map((line) => {
      const key = ASSIGNMENT.exec(line)?.[1];
      const spec = key === undefined ? undefined : secrets.get(key);
      if (!spec || !key) return line;
      // The value as the stack reads it (dotenv: quotes and a trailing comment removed).
      const value = parseDotenv(line)[key] ?? "";
      if (value !== "" && value !== PLACEHOLDER) return line;
      filled.push(key);
      return `${key}=${generateSecret(spec)}`;
    })
    .join("\n");
  return { text, filled, added };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      env: { type: "string", default: path.join(REPO_ROOT, ".env") },
      example: { type: "string", default: path.join(REPO_ROOT, ".env.example") },
    },
  });
  const envFile = values.env;
  const exampleFile = values.example;
  if (!existsSync(exampleFile)) {
    process.stderr.write(`env-file: ${exampleFile} is missing; it is the template of .env\n`);
    process.exit(1);
  }
  const current = existsSync(envFile) ? readFileSync(envFile, "utf8") : undefined;
  const { text, filled, added } = mergeEnv(current, readFileSync(exampleFile, "utf8"));
  if (current === text) {
    process.stdout.write(`${envFile}: up to date\n`);
    return;
  }
  writeFileSync(envFile, text, { mode: 0o600 });
  const parts = [
    current === undefined ? "created from .env.example" : "",
    added.length > 0 ? `added ${added.join(", ")}` : "",
    filled.length > 0 ? `generated ${filled.join(", ")}` : "",
  ].filter((p) => p !== "");
  process.stdout.write(`${envFile}: ${parts.join("; ")}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname))
  main();
