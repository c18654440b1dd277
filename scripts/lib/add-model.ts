/**
 * Registers a model in litellm/config.yaml (LiteLLM's proxy config format) for one backend, editing the file
 * through the `yaml` Document API so every comment and the order of keys stay, and validating the result with
 * the gateway's own loader (services/gateway/src/config/load-model-config.ts) before writing it: a file the
 * gateway would refuse is never written. Run by scripts/add-model.sh; `--help` lists the options.
 *
 * Backends (an entry's `litellm_params`):
 * - local-runner: `openai/<model>` at a local model runner's OpenAI-compatible URL (default Docker Model
 *   Runner's, reachable from containers), no key.
 * - cloud: `openai/<model>` or `anthropic/<model>` with `api_key: os.environ/OPENAI_API_KEY` (or ANTHROPIC_…);
 *   the key goes in .env.
 * - remote: `openai/<model>` at `--api-base` (any OpenAI-compatible server), key from `--api-key-env` if any.
 * - mock-npu: a copy of the registered model `--model` (default: the first one) under `<model>-npu`, tagged
 *   `npu` in `model_info.tags`.
 *
 * Re-running with the same arguments changes nothing ("already registered"). Exit status: 0 registered or
 * already there, 1 the result would not load (the loader's message is printed), 2 bad arguments.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse as parseDotenv } from "dotenv";
import { type Document, isMap, isScalar, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from "yaml";
import { REPO_ROOT } from "../../infra/files.js";
import { ConfigError, loadModelConfig } from "../../services/gateway/src/config/load-model-config.js";

/** The backends of `--backend` (SPEC's bootstrap flags; `skip` registers nothing). */
export const BACKENDS = ["local-runner", "cloud", "remote", "mock-npu"] as const;
export type Backend = (typeof BACKENDS)[number];

/** Default URL of a local model runner as the gateway container sees it (Docker Model Runner's). */
export const LOCAL_RUNNER_API_BASE = "http://host.docker.internal:12434/engines/v1";

/** What to register. */
export interface AddModelRequest {
  backend: Backend;
  /** Upstream model name (local-runner, cloud, remote) or the registered `model_name` to clone (mock-npu). */
  model?: string;
  /** `model_name` clients will send; default the model name (`<model>-npu` for mock-npu). */
  alias?: string;
  /** Server URL for remote (required) and local-runner (default {@link LOCAL_RUNNER_API_BASE}). */
  apiBase?: string;
  /** Variable in .env holding the server's key (remote), written as `os.environ/<VAR>`. */
  apiKeyEnv?: string;
  /** cloud: `openai` (default) or `anthropic`. */
  provider?: "openai" | "anthropic";
}

/** A refusal meant for the operator (bad arguments or nothing to clone). */
export class AddModelError extends Error {
  override name = "AddModelError";
}

type Entry = {
  model_name: string;
  litellm_params: Record<string, unknown>;
  model_info?: Record<string, unknown>;
};

function registered(doc: Document): Entry[] {
  const list = doc.toJS()?.model_list;
  return Array.isArray(list) ? (list as Entry[]) : [];
}

/**
 * The entry `request` asks for, given the entries already registered.
 * @throws AddModelError when a required argument is missing or mock-npu has nothing to clone.
 */
export function entryFor(request: AddModelRequest, existing: Entry[]): Entry {
  const { backend, model } = request;
  if (backend === "mock-npu") {
    const source = model === undefined ? existing[0] : existing.find((e) => e.model_name === model);
    if (!source)
      throw new AddModelError(
        model === undefined
          ? "mock-npu clones a registered model, and litellm/config.yaml registers none yet: add one first"
          : `mock-npu: no registered model named ${model} (registered: ${existing.map((e) => e.model_name).join(", ") || "none"})`,
      );
    const alias = request.alias ?? `${source.model_name}-npu`;
    return {
      model_name: alias,
      litellm_params: { ...source.litellm_params },
      model_info: { id: alias, tags: ["npu"] },
    };
  }
  if (!model) throw new AddModelError(`--backend ${backend} needs --model <model_name>`);
  const alias = request.alias ?? model;
  if (backend === "cloud") {
    const provider = request.provider ?? "openai";
    return {
      model_name: alias,
      litellm_params: {
        model: `${provider}/${model}`,
        api_key: `os.environ/${provider.toUpperCase()}_API_KEY`,
      },
    };
  }
  if (backend === "remote" && !request.apiBase)
    throw new AddModelError("--backend remote needs --api-base <http(s) URL of the server's /v1>");
  const params: Record<string, unknown> = {
    model: `openai/${model}`,
    api_base: request.apiBase ?? LOCAL_RUNNER_API_BASE,
  };
  if (request.apiKeyEnv) params.api_key = `os.environ/${request.apiKeyEnv}`;
  return { model_name: alias, litellm_params: params };
}

/** Whether `a` and `b` are the same registration (same alias and same upstream parameters). */
function sameEntry(a: Entry, b: Entry): boolean {
  return (
    a.model_name === b.model_name && JSON.stringify(a.litellm_params) === JSON.stringify(b.litellm_params)
  );
}

/**
 * The config text with `entry` appended to `model_list` (comments and layout kept), or undefined when an
 * identical entry is already there. A `model_list:` holding only commented-out examples keeps them above the
 * new entry.
 */
export function withEntry(text: string, entry: Entry): string | undefined {
  const doc = parseDocument(text);
  if (registered(doc).some((e) => sameEntry(e, entry))) return undefined;
  const node = doc.createNode(entry) as YAMLMap;
  const list = doc.get("model_list", true);
  if (isSeq(list)) {
    (list as YAMLSeq).add(node);
  } else if (list === undefined || (isScalar(list) && list.value === null)) {
    const seq = doc.createNode([]) as YAMLSeq;
    seq.add(node);
    if (isScalar(list)) {
      seq.commentBefore = [list.commentBefore, list.comment].filter(Boolean).join("\n") || undefined;
    }
    doc.set("model_list", seq);
  } else {
    throw new AddModelError("model_list in litellm/config.yaml is not a list");
  }
  if (!isMap(doc.contents)) throw new AddModelError("litellm/config.yaml is not a mapping");
  return doc.toString();
}

/**
 * Validates `text` with the gateway's loader, resolving `os.environ/VAR` from `env`; messages name `shownAs`
 * (the file being edited) rather than the temporary copy.
 * @throws ConfigError with the loader's message (naming the entry and, for a missing variable, what to set).
 */
export function validate(text: string, env: NodeJS.ProcessEnv, shownAs: string): void {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "add-model-")), "config.yaml");
  writeFileSync(file, text);
  try {
    loadModelConfig(file, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(
      shownAs,
      error.problems.map((p) => p.replaceAll(file, shownAs)),
    );
  } finally {
    rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

const HELP = `Usage: scripts/add-model.sh --backend <backend> [options]

Registers a model in litellm/config.yaml (comments kept), checked by the gateway's own config loader first.
The next \`pulumi up\` rebuilds the gateway image with it and replaces the gateway container.

Backends:
  local-runner   --model <name>: a model served by a local model runner (default URL ${LOCAL_RUNNER_API_BASE})
  cloud          --model <name>: a cloud provider's model; --provider openai|anthropic (default openai);
                 the key is read from OPENAI_API_KEY / ANTHROPIC_API_KEY in .env
  remote         --model <name> --api-base <url>: any OpenAI-compatible server; --api-key-env <VAR> if it needs a key
  mock-npu       [--model <registered model_name>]: clones a registered model (default the first) as <model>-npu,
                 tagged npu

Options:
  --alias <name>        model_name clients send (default the model name, <model>-npu for mock-npu)
  --api-base <url>      server URL, e.g. http://10.0.0.5:8000/v1
  --api-key-env <VAR>   variable of .env with the server's key (written as os.environ/VAR)
  --provider <name>     cloud provider: openai or anthropic
  --config <file>       config to edit (default litellm/config.yaml)
  --env-file <file>     where os.environ/VAR values come from besides the environment (default .env)
  --dry-run             print the new config instead of writing it
  -h, --help            show this help
`;

const OPTIONS = {
  backend: { type: "string" },
  model: { type: "string" },
  alias: { type: "string" },
  "api-base": { type: "string" },
  "api-key-env": { type: "string" },
  provider: { type: "string" },
  config: { type: "string", default: path.join(REPO_ROOT, "litellm/config.yaml") },
  "env-file": { type: "string", default: path.join(REPO_ROOT, ".env") },
  "dry-run": { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

function main(): number {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];
  try {
    values = parseArgs({ args: process.argv.slice(2), options: OPTIONS }).values;
  } catch (error) {
    process.stderr.write(`add-model: ${(error as Error).message} (see --help)\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const backend = values.backend as Backend | undefined;
  if (!backend || !BACKENDS.includes(backend)) {
    process.stderr.write(`add-model: --backend must be one of ${BACKENDS.join(", ")} (see --help)\n`);
    return 2;
  }
  if (values.provider !== undefined && values.provider !== "openai" && values.provider !== "anthropic") {
    process.stderr.write("add-model: --provider must be openai or anthropic\n");
    return 2;
  }
  const configFile = values.config;
  const envFile = values["env-file"];
  const env = {
    ...(existsSync(envFile) ? parseDotenv(readFileSync(envFile, "utf8")) : {}),
    ...process.env,
  };
  const text = readFileSync(configFile, "utf8");
  try {
    const entry = entryFor(
      {
        backend,
        model: values.model,
        alias: values.alias,
        apiBase: values["api-base"],
        apiKeyEnv: values["api-key-env"],
        provider: values.provider as AddModelRequest["provider"],
      },
      registered(parseDocument(text)),
    );
    const next = withEntry(text, entry);
    if (next === undefined) {
      process.stdout.write(`add-model: ${entry.model_name} is already registered in ${configFile}\n`);
      return 0;
    }
    validate(next, env, configFile);
    if (values["dry-run"]) {
      process.stdout.write(next);
      return 0;
    }
    writeFileSync(configFile, next);
    process.stdout.write(
      `add-model: registered ${entry.model_name} (${String(entry.litellm_params.model)}) in ${configFile}; ` +
        "`pulumi up` rebuilds the gateway with it\n",
    );
    return 0;
  } catch (error) {
    if (error instanceof AddModelError) {
      process.stderr.write(`add-model: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`add-model: not written, the gateway would refuse it:\n${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname))
  process.exit(main());
