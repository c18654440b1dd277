/**
 * The exact cache's key: SHA-256 over a canonical JSON text of everything that decides an answer. Two requests
 * get the same key exactly when they ask the same model group (the alias as resolved, at the config's version
 * of that group) the same thing:
 *
 * - canonical: object members sorted by name at every depth, `undefined` members left out, so member order
 *   never matters (Bifrost #2791: identical requests that hashed differently);
 * - defaults explicit where they are cheap to know (`n: 1`, `temperature: 1`, …; see {@link KEY_DEFAULTS}), and
 *   `max_tokens` read as `max_completion_tokens`, so a request that spells a default out hits the one that
 *   left it implicit;
 * - every member of the body counts except those that only change how the answer is delivered or booked
 *   ({@link DELIVERY_FIELDS}: `stream`, `stream_options`, `user`, `metadata`, `cache`, …): an unknown new
 *   parameter makes a different key rather than a false hit;
 * - computed from the body as the client sent it, before the input guard masks it: two prompts whose PII the
 *   guard masks to the same text keep different keys;
 * - the scope (the key's team, else the key; or `global`) and the namespace are in the hashed text too.
 */
import { createHash } from "node:crypto";
import type { AuthContext } from "../auth/types.js";
import type { CacheableCallType, ResponseCacheScope } from "../config/cache-settings.js";

/** Members that change how an answer is delivered, logged or booked, never what it says. */
export const DELIVERY_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "stream",
  "stream_options",
  "user",
  "metadata",
  "cache",
  "store",
  "safety_identifier",
  "prompt_cache_key",
  "tags",
]);

/**
 * Defaults made explicit per call type (OpenAI's and Anthropic's API references): a request that leaves one out
 * gets the same key as one that sends the default.
 */
export const KEY_DEFAULTS: Readonly<Partial<Record<CacheableCallType, Readonly<Record<string, unknown>>>>> = {
  acompletion: {
    n: 1,
    temperature: 1,
    top_p: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    logprobs: false,
    parallel_tool_calls: true,
  },
  atext_completion: { n: 1, best_of: 1, temperature: 1, top_p: 1, echo: false },
  aembedding: { encoding_format: "float" },
  aresponses: { temperature: 1, top_p: 1, parallel_tool_calls: true },
  anthropic_messages: {},
};

/**
 * `value` as JSON with object members sorted by name at every depth (`undefined` members and array holes as
 * JSON.stringify treats them). Used for hashing, not for sending.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const members: string[] = [];
  for (const name of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined || typeof member === "function") continue;
    members.push(`${JSON.stringify(name)}:${canonicalJson(member)}`);
  }
  return `{${members.join(",")}}`;
}

/** The answer-changing members of `body` with the call type's defaults filled in (a shallow copy). */
export function answerParameters(callType: string, body: Record<string, unknown>): Record<string, unknown> {
  const params: Record<string, unknown> = { ...KEY_DEFAULTS[callType as CacheableCallType] };
  for (const [name, value] of Object.entries(body)) {
    if (DELIVERY_FIELDS.has(name) || value === undefined || value === null) continue;
    params[name === "max_tokens" && callType === "acompletion" ? "max_completion_tokens" : name] = value;
  }
  if (callType === "acompletion" && params.tool_choice === undefined)
    params.tool_choice = Array.isArray(params.tools) && params.tools.length > 0 ? "auto" : "none";
  return params;
}

/**
 * Whose entries a caller shares: `global`, else `team:<team_id>` for a team's key, else `key:<token hash>`;
 * the master key's calls share `master`.
 */
export function scopeOf(auth: AuthContext, scope: ResponseCacheScope): string {
  if (scope === "global") return "global";
  if (auth.kind !== "virtual") return "master";
  return auth.teamId ? `team:${auth.teamId}` : `key:${auth.keyHash}`;
}

/** What a key is computed from. */
export interface KeyInput {
  /** LiteLLM's `call_type` of the endpoint. */
  callType: string;
  /** The resolved alias (`call.model`). */
  modelGroup: string;
  /** The group's config version ({@link groupVersions}). */
  groupVersion: string;
  /** {@link scopeOf}. */
  scope: string;
  /** The config's `namespace` and the request's, joined. */
  namespace: string;
  /** The body as the client sent it (validated, not yet guarded). */
  body: Record<string, unknown>;
}

/** The entry's key: 64 hex digits of SHA-256 over the canonical JSON of `input` (the `x-litellm-cache-key`). */
export function cacheKey(input: KeyInput): string {
  const material = canonicalJson({
    v: 1,
    call_type: input.callType,
    model_group: input.modelGroup,
    group_version: input.groupVersion,
    scope: input.scope,
    namespace: input.namespace,
    params: answerParameters(input.callType, input.body),
  });
  return createHash("sha256").update(material).digest("hex");
}

/**
 * Per model group, a version of its configuration: 16 hex digits of SHA-256 over its deployments' provider,
 * upstream model, API base and id, sorted. An alias pointed at another model (or another server) makes new keys;
 * a restart with the same config keeps them.
 */
export function groupVersions(
  deployments: ReadonlyArray<{
    modelName: string;
    provider: string;
    upstreamModel: string;
    apiBase: string;
    id: string;
  }>,
): Map<string, string> {
  const byGroup = new Map<string, string[]>();
  for (const d of deployments) {
    const list = byGroup.get(d.modelName) ?? [];
    list.push(canonicalJson([d.provider, d.upstreamModel, d.apiBase, d.id]));
    byGroup.set(d.modelName, list);
  }
  const versions = new Map<string, string>();
  for (const [group, list] of byGroup)
    versions.set(group, createHash("sha256").update(list.sort().join("\n")).digest("hex").slice(0, 16));
  return versions;
}
