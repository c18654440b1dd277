/** Dockerfiles and `.dockerignore` read as text, for tests that check them without a Docker engine. */
import { readFileSync } from "node:fs";
import { REPO_ROOT } from "../../infra/files.js";

/** A Dockerfile's instructions, each trimmed, continuation lines joined, blank and comment lines dropped. */
export interface DockerfileView {
  /** Every instruction in file order, e.g. `RUN npm ci --omit=dev`. */
  instructions: string[];
  /** The `FROM …` instructions, one per stage. */
  stages: string[];
  /** The instructions of the last stage, from its `FROM` on. */
  finalStage: string[];
}

/** Non-blank, non-comment lines of `text`, trimmed. */
function meaningfulLines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

/**
 * Reads the Dockerfile at `relPath` (relative to the repository root, e.g. `services/gateway/Dockerfile`).
 * @throws the `readFileSync` error (ENOENT) when the file is missing.
 */
export function readDockerfile(relPath: string): DockerfileView {
  const instructions = meaningfulLines(readFileSync(`${REPO_ROOT}${relPath}`, "utf8").replace(/\\\n/g, " "));
  const stages = instructions.filter((l) => l.startsWith("FROM "));
  const finalStage = instructions.slice(instructions.lastIndexOf(stages.at(-1) ?? ""));
  return { instructions, stages, finalStage };
}

/** The patterns of the repository's `.dockerignore`, trimmed, without blank and comment lines. */
export function dockerignorePatterns(): string[] {
  return meaningfulLines(readFileSync(`${REPO_ROOT}.dockerignore`, "utf8"));
}
