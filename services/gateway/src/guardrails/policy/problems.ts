/**
 * How policy problems are reported: every problem names the file and the path inside it
 * (`litellm/guardrails/policy.yaml: guardrails.pii.score_threshold: unknown threshold key(s): FOO`), and
 * all problems of a start-up are thrown together in one {@link PolicyError}.
 */
import type { z } from "zod";
import { ALL_ENTITIES, KNOWN_ENTITIES } from "./entities.js";

/** A path inside a YAML file: mapping keys and list indexes. */
export type Path = ReadonlyArray<string | number>;

/** The guardrail policy cannot be used; start-up stops. `message` lists every problem, one per line. */
export class PolicyError extends Error {
  override name = "PolicyError";
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(
      problems.length === 1
        ? (problems[0] ?? "")
        : `${problems.length} problems in the guardrail policy:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
    this.problems = problems;
  }
}

/** `guardrails[0].litellm_params.mode`. */
export function formatPath(path: Path): string {
  if (path.length === 0) return "(top level)";
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** Collects problems as `file: path: what`. */
export class Problems {
  readonly list: string[] = [];

  add(file: string, path: Path, what: string): void {
    this.list.push(`${file}: ${formatPath(path)}: ${what}`);
  }

  /** Runs a schema; every issue becomes a problem at its path. */
  parse<T extends z.ZodType>(schema: T, value: unknown, file: string, at: Path): z.output<T> | undefined {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) {
      const path = [...at, ...issue.path.filter((p): p is string | number => typeof p !== "symbol")];
      this.add(file, path, issue.message);
    }
    return undefined;
  }

  /** Checks the keys of an entity map (`entities`, `score_threshold`) against Presidio's entity names. */
  checkEntityKeys(
    file: string,
    path: Path,
    map: Readonly<Record<string, unknown>> | undefined,
    allowAll: boolean,
  ) {
    if (map === undefined) return;
    const unknown = Object.keys(map).filter(
      (k) => !KNOWN_ENTITIES.has(k) && !(allowAll && k === ALL_ENTITIES),
    );
    if (unknown.length > 0) {
      this.add(
        file,
        path,
        `unknown threshold key(s): ${unknown.join(", ")}; allowed: ${allowAll ? `${ALL_ENTITIES} and ` : ""}Presidio entity names (${[...KNOWN_ENTITIES].slice(0, 6).join(", ")}, …)`,
      );
    }
  }

  /** Throws a PolicyError when any problem was found. */
  throwIfAny(): void {
    if (this.list.length > 0) throw new PolicyError(this.list);
  }
}
