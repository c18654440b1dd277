/**
 * `model_list[]` → deployments: one {@link Deployment} per entry (entries sharing `model_name` form a
 * load-balanced group). `litellm_params.model` must name a supported provider (providers/), `openai/<name>`
 * (OpenAI or any OpenAI-compatible server at `api_base`) or `anthropic/<name>`. An absent `api_base` means
 * the provider's public API, whose key then defaults to the provider's variable (OPENAI_API_KEY,
 * ANTHROPIC_API_KEY) as in LiteLLM; with an `api_base` and no `api_key` the server is called without a key.
 */
import type { z } from "zod";
import { isPriced } from "../cost/pricing.js";
import { isProviderName, openAICompatiblePrefixes, providers } from "../providers/index.js";
import { type EnvRefs, envRef, viaVariable } from "./env-refs.js";
import { litellmParamsKeys, modelEntryKeys, modelInfoKeys } from "./litellm-keys.js";
import { describe, formatPath, isMapping, type Mapping, optional, type Path, toMs } from "./messages.js";
import { pricePartsOf } from "./price-keys.js";
import type { Report } from "./report.js";
import { litellmParamsSchema, modelInfoSchema } from "./schemas.js";
import type { Deployment } from "./types.js";

type Params = z.output<typeof litellmParamsSchema>;
type Upstream = Pick<Deployment, "provider" | "upstreamModel">;

/**
 * Reads `model_list`. Entries with problems are left out (their problems are recorded). Warns once per
 * deployment that has no price (its spend would stay 0).
 * @param created unix seconds, for `Deployment.created`.
 */
export function readModelList(report: Report, env: EnvRefs, value: unknown, created: number): Deployment[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    report.problem(["model_list"], `expected a list of model entries, got ${describe(value)}`);
    return [];
  }
  const deployments: Deployment[] = [];
  const idPaths = new Map<string, Path>();
  const groupSizes = new Map<string, number>();
  value.forEach((entry, index) => {
    const at: Path = ["model_list", index];
    const deployment = readEntry(report, env, entry, at);
    if (deployment === undefined) return;
    const position = groupSizes.get(deployment.modelName) ?? 0;
    groupSizes.set(deployment.modelName, position + 1);
    const explicit = deployment.id !== "";
    const id = explicit ? deployment.id : `${deployment.modelName}-${position}`;
    const idPath: Path = explicit ? [...at, "model_info", "id"] : at;
    const previous = idPaths.get(id);
    if (previous !== undefined) {
      report.problem(
        idPath,
        `deployment id "${id}" is already used at ${formatPath(previous)}; ids must be unique (set a distinct model_info.id)`,
      );
    }
    idPaths.set(id, idPath);
    const loaded = { ...deployment, id, created };
    if (!isPriced(loaded)) {
      report.warn(
        at,
        `no price is known for ${loaded.provider}/${loaded.upstreamModel} (model_name "${loaded.modelName}"), so its calls are recorded with spend 0 and budgets do not limit it; set litellm_params.input_cost_per_token and output_cost_per_token (USD per token; 0 for a free local model)`,
      );
    }
    deployments.push(loaded);
  });
  return deployments;
}

/** One `model_list[]` entry; undefined when it has problems (they are recorded). */
function readEntry(
  report: Report,
  env: EnvRefs,
  entry: unknown,
  at: Path,
): Omit<Deployment, "created"> | undefined {
  if (!isMapping(entry)) {
    report.problem(
      at,
      `expected a model entry (a mapping with model_name and litellm_params), got ${describe(entry)}`,
    );
    return undefined;
  }
  const before = report.problems.length;
  report.checkKeys(entry, at, modelEntryKeys);
  const name = readModelName(report, entry.model_name, [...at, "model_name"]);

  const rawParams = entry.litellm_params;
  if (!isMapping(rawParams)) {
    report.problem(
      [...at, "litellm_params"],
      rawParams === undefined
        ? "litellm_params is missing (it needs at least `model: provider/name`)"
        : `expected a mapping, got ${describe(rawParams)}`,
    );
    return undefined;
  }
  const paramsAt: Path = [...at, "litellm_params"];
  report.checkKeys(rawParams, paramsAt, litellmParamsKeys);
  const resolved = env.resolveParams(rawParams, paramsAt, name);
  const params = report.parse(litellmParamsSchema, resolved.values, paramsAt);
  const { model } = resolved.values;
  const upstream =
    typeof model === "string" && model !== "" ? readModel(report, model, [...paramsAt, "model"]) : undefined;
  const info = readModelInfo(report, entry.model_info, [...at, "model_info"]);
  if (upstream === undefined || params === undefined || name === undefined) return undefined;
  if (report.problems.length > before || resolved.unset) return undefined;

  const target = readTarget(report, env, upstream, params, rawParams, paramsAt);
  if (target === undefined) return undefined;
  const inputCost = params.input_cost_per_token ?? info?.input_cost_per_token;
  const outputCost = params.output_cost_per_token ?? info?.output_cost_per_token;
  return {
    id: info?.id === undefined ? "" : String(info.id),
    modelName: name,
    ...target,
    ...optional("rpm", params.rpm),
    ...optional("tpm", params.tpm),
    ...optional("inputCostPerToken", inputCost),
    ...optional("outputCostPerToken", outputCost),
    ...optional("priceParts", pricePartsOf(params, info)),
    ...optional("timeoutMs", toMs(params.timeout)),
    ...optional("streamTimeoutMs", toMs(params.stream_timeout)),
    ...optional("weight", params.weight),
    ...optional("baseModel", baseModelName(info?.base_model)),
    ...optional("supportedEndpoints", info?.supported_endpoints),
    ...optional("mode", info?.mode),
    ...optional("maxOutputTokens", info?.max_output_tokens),
    ...(info?.ignores_output_cap === true ? { ignoresOutputCap: true } : {}),
    ...optional("cacheControlInjectionPoints", params.cache_control_injection_points),
    tags: [...new Set([...(params.tags ?? []), ...(info?.tags ?? [])])],
  };
}

/** `model_info.base_model` without a supported provider's prefix (`openai/gpt-4o` → `gpt-4o`). */
function baseModelName(baseModel: string | undefined): string | undefined {
  if (baseModel === undefined || baseModel === "") return undefined;
  const slash = baseModel.indexOf("/");
  return slash > 0 && isProviderName(baseModel.slice(0, slash)) ? baseModel.slice(slash + 1) : baseModel;
}

function readModelName(report: Report, modelName: unknown, at: Path): string | undefined {
  if (typeof modelName !== "string" || modelName.trim() === "") {
    report.problem(
      at,
      modelName === undefined
        ? "model_name is missing (the name clients send as `model`)"
        : `expected a non-empty string, got ${describe(modelName)}`,
    );
  } else if (modelName.includes("*")) {
    report.problem(at, "wildcard model names are not supported; register each model by name");
  }
  return typeof modelName === "string" ? modelName : undefined;
}

function readModelInfo(
  report: Report,
  rawInfo: unknown,
  at: Path,
): z.output<typeof modelInfoSchema> | undefined {
  if (rawInfo === undefined || rawInfo === null) return undefined;
  if (!isMapping(rawInfo)) {
    report.problem(at, `expected a mapping, got ${describe(rawInfo)}`);
    return undefined;
  }
  report.checkKeys(rawInfo, at, modelInfoKeys);
  const info = report.parse(modelInfoSchema, rawInfo, at);
  if (info?.mode !== undefined && info.mode !== "chat" && info.mode !== "embedding") {
    report.warn(
      [...at, "mode"],
      `mode "${info.mode}" is listed in /v1/models, but the gateway serves only chat and embedding models`,
    );
  }
  return info;
}

/** Splits `litellm_params.model` into a supported provider and the upstream model name. */
function readModel(report: Report, model: string, at: Path): Upstream | undefined {
  const slash = model.indexOf("/");
  const prefix = slash > 0 ? model.slice(0, slash) : "";
  const upstreamModel = model.slice(slash + 1);
  if (isProviderName(prefix) && upstreamModel !== "") return { provider: prefix, upstreamModel };
  const supported = Object.keys(providers).map((p) => `${p}/<model>`);
  const hint = openAICompatiblePrefixes.has(prefix)
    ? `; ${prefix} speaks OpenAI's API: write openai/${upstreamModel || "<model>"} with api_base set to its /v1 URL`
    : "";
  report.problem(
    at,
    prefix === ""
      ? `model "${model}" has no provider prefix; supported: ${supported.join(", ")}${hint}`
      : `provider "${prefix}" is not supported; supported: ${supported.join(", ")}${hint}`,
  );
  return undefined;
}

/** api_base and key of an entry whose params passed the schema. */
function readTarget(
  report: Report,
  env: EnvRefs,
  { provider, upstreamModel }: Upstream,
  params: Params,
  raw: Mapping,
  at: Path,
): Pick<Deployment, "provider" | "upstreamModel" | "apiBase" | "apiKey" | "apiKeyEnv"> | undefined {
  let apiBase = providers[provider].defaultApiBase;
  if (params.api_base !== undefined) {
    const url = URL.canParse(params.api_base) ? new URL(params.api_base) : undefined;
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      report.problem(
        [...at, "api_base"],
        `expected an http(s) URL such as http://host:8000/v1${viaVariable(raw.api_base)}`,
      );
      return undefined;
    }
    apiBase = params.api_base.trim().replace(/\/+$/, "");
    if (provider === "anthropic" && (url.pathname === "/" || url.pathname === "")) {
      apiBase = `${apiBase}/v1`;
      report.warn(
        [...at, "api_base"],
        "api_base has no path; using <api_base>/v1 (Anthropic's Messages API is /v1/messages)",
      );
    }
  }

  const keyRef = envRef(raw.api_key);
  if (params.api_key !== undefined && params.api_key !== "") {
    if (keyRef === undefined) {
      report.warn(
        [...at, "api_key"],
        "api_key is written in the file; prefer os.environ/VAR so the key stays in .env",
      );
    }
    return { provider, upstreamModel, apiBase, apiKey: params.api_key, ...optional("apiKeyEnv", keyRef) };
  }
  if (params.api_base !== undefined) return { provider, upstreamModel, apiBase };
  // The provider's public API needs a key; LiteLLM reads the provider's conventional variable.
  const keyEnv = providers[provider].keyEnv;
  const key = env.lookup(keyEnv);
  if (key === undefined) {
    env.recordUnset(keyEnv, [...at, "api_key"], undefined);
    return undefined;
  }
  return { provider, upstreamModel, apiBase, apiKey: key, apiKeyEnv: keyEnv };
}
