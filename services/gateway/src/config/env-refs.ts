/**
 * `os.environ/VAR` references of a LiteLLM config (LiteLLM docs, proxy/configs.md "environment variables"):
 * looked up in the process environment, then in the file's `environment_variables` (the process environment
 * wins, so `.env` overrides a value baked into the image). A variable that is unset, empty or still
 * `replace-me` is a problem; all uses of one variable are reported together in one message.
 */
import { z } from "zod";
import { litellmParamsKeys } from "./litellm-keys.js";
import { formatPath, isMapping, type Mapping, type Path } from "./messages.js";
import type { Report } from "./report.js";

const ENV_PREFIX = "os.environ/";
const PLACEHOLDER = "replace-me";

const environmentVariablesSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** The variable name of an `os.environ/VAR` string, else undefined. */
export function envRef(value: unknown): string | undefined {
  return typeof value === "string" && value.startsWith(ENV_PREFIX)
    ? value.slice(ENV_PREFIX.length).trim()
    : undefined;
}

/** " (the value of VAR)" when `raw` was an `os.environ/VAR` reference, else "". */
export function viaVariable(raw: unknown): string {
  const name = envRef(raw);
  return name === undefined ? "" : ` (the value of ${name})`;
}

/** One `os.environ/VAR` use, for the message when VAR is unset. */
interface EnvUse {
  path: Path;
  modelName: string | undefined;
}

/** Resolves references against one environment and remembers the unset ones. */
export class EnvRefs {
  private readonly vars: Record<string, string | undefined>;
  /** Unset variables → where they are used (first use first). */
  private readonly unset = new Map<string, EnvUse[]>();

  /**
   * @param report where problems go.
   * @param env the process environment.
   * @param root the whole file (to name the model of a `model_list[i]` path in messages).
   */
  constructor(
    private readonly report: Report,
    env: NodeJS.ProcessEnv,
    private readonly root: Mapping,
  ) {
    this.vars = { ...env };
  }

  /** Adds the file's `environment_variables` (the process environment wins). */
  addFileVariables(value: unknown): void {
    if (value === undefined || value === null) return;
    const parsed = this.report.parse(environmentVariablesSchema, value, ["environment_variables"]);
    for (const [name, v] of Object.entries(parsed ?? {})) {
      if (this.vars[name] === undefined || this.vars[name] === "") this.vars[name] = String(v);
    }
  }

  /**
   * A copy of `litellm_params` with every `os.environ/VAR` string of a used key replaced. Unset variables
   * are recorded (reported together by {@link reportUnset}), their keys dropped, and `unset` is true.
   */
  resolveParams(
    params: Mapping,
    at: Path,
    modelName: string | undefined,
  ): { values: Mapping; unset: boolean } {
    const values: Mapping = {};
    let unset = false;
    for (const [key, value] of Object.entries(params)) {
      if (!litellmParamsKeys.used.includes(key)) continue;
      const name = envRef(value);
      if (name === undefined) {
        values[key] = value;
        continue;
      }
      const resolved = this.lookup(name);
      if (resolved === undefined) {
        this.recordUnset(name, [...at, key], modelName);
        unset = true;
      } else {
        values[key] = resolved;
      }
    }
    return { values, unset };
  }

  /** The variable's value, or undefined when unset, empty or the `replace-me` placeholder. */
  lookup(name: string): string | undefined {
    const value = this.vars[name];
    return value === undefined || value.trim() === "" || value === PLACEHOLDER ? undefined : value;
  }

  /** Remembers a use of an unset variable. */
  recordUnset(name: string, path: Path, modelName: string | undefined): void {
    const uses = this.unset.get(name) ?? [];
    uses.push({ path, modelName: modelName ?? this.modelNameAt(path) });
    this.unset.set(name, uses);
  }

  /** One problem per unset variable, naming every use and what to do. */
  reportUnset(): void {
    const file = this.report.file;
    for (const [name, uses] of this.unset) {
      const where = uses.map((u) => {
        const model = u.modelName === undefined ? "" : `model "${u.modelName}" `;
        return `${model}(${formatPath(u.path)}${this.report.position(u.path)})`;
      });
      const entries = uses.some((u) => u.path[0] === "model_list");
      const action = entries
        ? `Set ${name} in .env (or the gateway's environment), or remove ${uses.length === 1 ? "this entry" : "these entries"} from ${file} (and rebuild the gateway image if it runs in a container).`
        : `Set ${name} in .env (or the gateway's environment), or remove the line from ${file}.`;
      this.report.problems.push(
        `environment variable ${name} is unset or empty (or still "${PLACEHOLDER}"), but ${file} uses it: ${where.join(", ")}. ${action}`,
      );
    }
  }

  private modelNameAt(path: Path): string | undefined {
    const list = this.root.model_list;
    if (path[0] !== "model_list" || typeof path[1] !== "number" || !Array.isArray(list)) return undefined;
    const entry: unknown = list[path[1]];
    return isMapping(entry) && typeof entry.model_name === "string" ? entry.model_name : undefined;
  }
}
