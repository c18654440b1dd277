/**
 * Collects what is wrong with a config file (problems: the file is refused) and what the operator should
 * know (warnings: logged at start-up), each naming the path inside the file and its line and column.
 */
import { type Document, isMap, isScalar, type LineCounter } from "yaml";
import type { z } from "zod";
import type { KeySet } from "./litellm-keys.js";
import {
  describe,
  editDistance,
  expectedName,
  formatPath,
  type Mapping,
  type Path,
  valueAt,
} from "./messages.js";

/** Problems and warnings of one config file. */
export class Report {
  readonly problems: string[] = [];
  readonly warnings: string[] = [];

  /**
   * @param file absolute path of the config file (named in every message).
   * @param doc the parsed YAML document (for line and column of a path).
   * @param lines the line counter `doc` was parsed with.
   */
  constructor(
    readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /** Records a problem at a path: "<what> at <path> in <file> (line L, column C)". */
  problem(path: Path, what: string): void {
    this.problems.push(`${what} at ${formatPath(path)} in ${this.file}${this.position(path)}`);
  }

  /** Records a warning at a path: "<path> in <file> (line L, column C): <what>". */
  warn(path: Path, what: string): void {
    this.warnings.push(`${formatPath(path)} in ${this.file}${this.position(path)}: ${what}`);
  }

  /** Records unknown and unsupported keys as problems and ignored keys as warnings. */
  checkKeys(value: Mapping, at: Path, keys: KeySet): void {
    const unknown: string[] = [];
    const ignoredOpen: string[] = [];
    for (const key of Object.keys(value)) {
      if (keys.used.includes(key)) continue;
      const unsupported = keys.unsupported?.[key];
      const ignored = keys.ignored[key];
      if (unsupported !== undefined) {
        this.problem([...at, key], `${key} is not supported by this gateway; ${unsupported}`);
      } else if (ignored !== undefined) {
        this.warn([...at, key], `${key} is ignored by this gateway${ignored === "" ? "" : ` (${ignored})`}`);
      } else if (keys.open) {
        ignoredOpen.push(key);
      } else {
        unknown.push(key);
      }
    }
    if (ignoredOpen.length > 0) {
      this.warn(
        at,
        `${ignoredOpen.join(", ")} ${ignoredOpen.length === 1 ? "is" : "are"} ignored by this gateway (metadata it does not use)`,
      );
    }
    if (unknown.length > 0) {
      const known = [...keys.used, ...Object.keys(keys.ignored)];
      const names = unknown.map((k) => {
        const near = known.find((n) => editDistance(k, n) <= Math.min(2, Math.floor(n.length / 3)));
        return near === undefined ? `"${k}"` : `"${k}" (did you mean "${near}"?)`;
      });
      this.problems.push(
        `unknown key(s) ${names.join(", ")} at ${formatPath(at)} in ${this.file}${this.position(at, unknown[0])}; known keys are: ${known.join(", ")}`,
      );
    }
  }

  /** Runs a schema over a value at a path; its issues become problems naming the path and expected type. */
  parse<T extends z.ZodType>(schema: T, value: unknown, at: Path): z.output<T> | undefined {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) {
      const path = [...at, ...issue.path.filter((p): p is string | number => typeof p !== "symbol")];
      this.problem(path, explain(issue, valueAt(value, issue.path)));
    }
    return undefined;
  }

  /** " (line L, column C)" of the node at `path` (or of the key `key` inside it), or "" when not found. */
  position(path: Path, key?: string): string {
    const target = key === undefined ? path : [...path, key];
    if (target.length === 0) return "";
    const parent = this.doc.getIn(target.slice(0, -1), true);
    const last = target[target.length - 1];
    let offset: number | undefined;
    if (isMap(parent)) {
      const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(last));
      const node = pair?.key;
      offset = isScalar(node) ? node.range?.[0] : undefined;
    } else {
      const node = this.doc.getIn(target, true) as { range?: [number, number, number] } | undefined;
      offset = node?.range?.[0];
    }
    if (offset === undefined) return "";
    const { line, col } = this.lines.linePos(offset);
    return ` (line ${line}, column ${col})`;
  }
}

function explain(issue: z.core.$ZodIssue, actual: unknown): string {
  switch (issue.code) {
    case "invalid_type":
      return actual === undefined
        ? "is required but missing"
        : `expected ${expectedName(issue.expected)}, got ${describe(actual)}`;
    case "too_small":
      if (issue.origin === "string") return "must not be empty";
      return `must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)}`;
    case "invalid_union":
      return `expected a string or a number, got ${describe(actual)}`;
    default:
      return issue.message;
  }
}
