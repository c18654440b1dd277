/**
 * Loads the model registry, `litellm/config.yaml`, in LiteLLM's proxy config format
 * (docs/my-website/docs/proxy/configs.md and config_settings.md in BerriAI/litellm), validates it, and resolves
 * its `os.environ/VAR` references. Everything wrong with the file is reported at once, in one
 * {@link ConfigError} whose message names the file, the path inside it (and the line) and, for environment
 * references, the variable and the entries that use it. Values are never echoed: a config holds keys.
 *
 * The work is split by section: model-list.ts (deployments), router-settings.ts (routing), env-refs.ts
 * (`os.environ/VAR`), report.ts (problems and warnings with their positions).
 */
import { readFileSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { readCacheSettings } from "./cache-params.js";
import { ConfigError } from "./config-error.js";
import { EnvRefs, envRef } from "./env-refs.js";
import {
  generalSettingsKeys,
  type KeySet,
  litellmSettingsKeys,
  routerSettingsKeys,
  topLevelKeys,
} from "./litellm-keys.js";
import { readMcpServers } from "./mcp-servers.js";
import { describe, isMapping, type Mapping } from "./messages.js";
import { readModelList } from "./model-list.js";
import { Report } from "./report.js";
import { readRouterSettings, routerDefaults } from "./router-settings.js";
import { generalSettingsSchema, litellmSettingsSchema, routerSettingsSchema } from "./schemas.js";
import type { ModelConfig } from "./types.js";

export { ConfigError } from "./config-error.js";
export { formatPath } from "./messages.js";

/** The loaded config plus what the operator should know about it (ignored keys, fallbacks taken). */
export type LoadedModelConfig = ModelConfig & {
  /** One human-readable sentence per ignored key, unpriced deployment or replaced setting; log them at start-up. */
  warnings: string[];
};

/** Options of {@link loadModelConfig}. */
export interface LoadModelConfigOptions {
  /** Clock in epoch ms, for `Deployment.created` (default `Date.now`). */
  now?: () => number;
}

/**
 * Reads, validates and resolves a LiteLLM proxy config file.
 *
 * - `model_list[]` → one Deployment per entry (model-list.ts).
 * - `os.environ/VAR` in `litellm_params` and `general_settings.master_key` is looked up in `env`, then in the
 *   file's `environment_variables` (env-refs.ts). A variable that is unset, empty or still `replace-me` is an
 *   error.
 * - Routing settings: router-settings.ts; an unimplemented `routing_strategy` is an error.
 * - `guardrails:` is kept as raw data (`guardrails`) for the guardrails module to parse.
 * - `mcp_servers:` → the upstream MCP servers of `/mcp` (`config/mcp-servers.ts`).
 * - `litellm_settings.cache` / `cache_params` → the response cache's settings (cache-params.ts).
 * - An empty file, `model_list: []`, `model_list:` or no `model_list` is a valid, empty registry.
 *
 * @param path config file path, absolute or relative to the working directory (GATEWAY_CONFIG).
 * @param env environment to resolve references from (default `process.env`).
 * @param options `now` clock in epoch ms, for `Deployment.created` (unix seconds).
 * @returns the deployments, routing settings, guardrails and master key, plus warnings.
 * @throws ConfigError when the file is missing, unreadable, not YAML, of the wrong shape, has unknown or
 *   unsupported keys, references unset variables, names a fallback group that does not exist, or asks for a
 *   routing strategy that is not implemented.
 */
export function loadModelConfig(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  options: LoadModelConfigOptions = {},
): LoadedModelConfig {
  const file = resolvePath(path);
  const text = readConfigFile(file);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const [start] = syntax.pos;
    const { line, col } = lineCounter.linePos(start);
    const reason = syntax.message.split("\n")[0] ?? syntax.message;
    throw new ConfigError(file, [
      `YAML syntax error in ${file} at line ${line}, column ${col}: ${reason.replace(/ at line \d+, column \d+:?$/, "")}`,
    ]);
  }
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    // Only alias expansion can fail here (a "billion laughs" file).
    throw new ConfigError(file, [`YAML error in ${file}: ${(error as Error).message}`]);
  }
  const report = new Report(file, doc, lineCounter);
  const result = load(report, root ?? {}, env, Math.floor((options.now ?? Date.now)() / 1000));
  if (report.problems.length > 0) throw new ConfigError(file, report.problems);
  return result;
}

/** Reads the file, turning file-system errors into ConfigErrors that say what to do. */
function readConfigFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new ConfigError(file, [
        `model config file ${file} does not exist; set GATEWAY_CONFIG to the path of your config.yaml`,
      ]);
    }
    if (code === "EISDIR") {
      throw new ConfigError(file, [`model config ${file} is a directory; GATEWAY_CONFIG must name a file`]);
    }
    throw new ConfigError(file, [`cannot read model config ${file}: ${code ?? String(error)}`]);
  }
}

function load(report: Report, root: unknown, env: NodeJS.ProcessEnv, created: number): LoadedModelConfig {
  const empty: LoadedModelConfig = {
    sourcePath: report.file,
    deployments: [],
    router: { ...routerDefaults, fallbacks: {} },
    guardrails: [],
    warnings: report.warnings,
  };
  if (!isMapping(root)) {
    report.problem([], `expected a mapping (model_list, router_settings, …), got ${describe(root)}`);
    return empty;
  }
  report.checkKeys(root, [], topLevelKeys);
  const refs = new EnvRefs(report, env, root);
  refs.addFileVariables(root.environment_variables);

  const deployments = readModelList(report, refs, root.model_list, created);
  // Group names from the file, including entries that have problems, so that one bad entry does not also
  // make every fallback naming its group an error.
  const entries: unknown[] = Array.isArray(root.model_list) ? root.model_list : [];
  const groups = new Set(
    entries.flatMap((e) => (isMapping(e) && typeof e.model_name === "string" ? [e.model_name] : [])),
  );
  const litellmSettings = section(
    report,
    root,
    "litellm_settings",
    litellmSettingsKeys,
    litellmSettingsSchema,
  );
  const routerSettings = section(report, root, "router_settings", routerSettingsKeys, routerSettingsSchema);
  const general = section(report, root, "general_settings", generalSettingsKeys, generalSettingsSchema);

  const router = readRouterSettings(report, litellmSettings ?? {}, routerSettings ?? {}, groups, deployments);
  const guardrails = readGuardrails(report, root.guardrails);
  const masterKey = readMasterKey(report, refs, general?.master_key);
  const mcpServers = readMcpServers(report, refs, root.mcp_servers);
  const responseCache = readCacheSettings(
    report,
    litellmSettings?.cache,
    litellmSettings?.cache_params,
    deployments,
  );
  refs.reportUnset();
  const idleSeconds = general?.stream_client_idle_timeout;
  return {
    ...empty,
    deployments,
    router,
    guardrails,
    mcpServers,
    ...(masterKey === undefined ? {} : { masterKey }),
    ...(responseCache === undefined ? {} : { responseCache }),
    ...(idleSeconds === undefined ? {} : { streamClientIdleTimeoutMs: idleSeconds * 1000 }),
  };
}

/** Reads one `*_settings` mapping: key check, then the schema of the keys used. Null/absent → undefined. */
function section<T extends z.ZodType>(
  report: Report,
  root: Mapping,
  key: string,
  keys: KeySet,
  schema: T,
): z.output<T> | undefined {
  const value = root[key];
  if (value === undefined || value === null) return undefined;
  if (!isMapping(value)) {
    report.problem([key], `expected a mapping, got ${describe(value)}`);
    return undefined;
  }
  report.checkKeys(value, [key], keys);
  return report.parse(schema, value, [key]);
}

/**
 * LiteLLM's top-level `guardrails:` list (docs proxy/guardrails/quick_start.md), kept as raw entries: the
 * guardrails module (services/gateway/src/guardrails/) parses and validates them.
 */
function readGuardrails(report: Report, value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    report.problem(
      ["guardrails"],
      `expected a list of guardrails (each with guardrail_name and litellm_params), got ${describe(value)}`,
    );
    return [];
  }
  return value;
}

function readMasterKey(report: Report, refs: EnvRefs, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const at = ["general_settings", "master_key"];
  const name = envRef(value);
  const key = name === undefined ? value : refs.lookup(name);
  if (name !== undefined && key === undefined) {
    if (refs.lookup("GATEWAY_MASTER_KEY") !== undefined) {
      report.warn(at, `refers to ${name}, which is unset; GATEWAY_MASTER_KEY is used`);
    } else {
      refs.recordUnset(name, at, undefined);
    }
    return undefined;
  }
  if (key !== undefined && !key.startsWith("sk-")) {
    report.warn(at, "the master key does not start with sk- (LiteLLM requires that; clients may expect it)");
  }
  return key;
}
