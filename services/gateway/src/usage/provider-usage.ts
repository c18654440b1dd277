/**
 * Readers of the providers' `usage` objects into the gateway's {@link Usage} with its {@link UsageBreakdown}
 * (see usage.ts for each field's source): OpenAI's chat completions / completions / embeddings usage
 * ({@link openAiUsage}), the Responses API's ({@link responsesApiUsage}) and Anthropic's Messages usage
 * ({@link anthropicUsage}). Every reader takes the upstream's parsed JSON as it came (missing, null or non-numeric
 * fields count as 0) and returns undefined when there is no usage to read. No I/O, no throws.
 */
import type { Usage, UsageBreakdown } from "./types.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A token count: a finite non-negative number, else 0. */
const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});

/** A breakdown with every part 0 but those given. */
function breakdown(parts: Partial<UsageBreakdown>): UsageBreakdown {
  return {
    input: 0,
    input_audio: 0,
    cache_read: 0,
    cache_write_5m: 0,
    cache_write_1h: 0,
    output: 0,
    output_reasoning: 0,
    output_audio: 0,
    accepted_prediction: 0,
    rejected_prediction: 0,
    web_search_requests: 0,
    ...parts,
  };
}

/**
 * A cache write split by lifetime: the 1-hour part from `ephemeral_1h_input_tokens`, the rest (all of it when
 * the split is absent) at 5 minutes (Anthropic API reference, `usage.cache_creation`).
 */
function cacheWrites(total: number, split: Obj): { cache_write_5m: number; cache_write_1h: number } {
  const hour = Math.min(n(split.ephemeral_1h_input_tokens), total);
  return { cache_write_5m: total - hour, cache_write_1h: hour };
}

/**
 * Cache writes, tokens, in Anthropic's (and LiteLLM's) names: `cache_creation_input_tokens`, else the sum of its
 * `cache_creation.ephemeral_5m_input_tokens` and `ephemeral_1h_input_tokens` split.
 */
function anthropicCacheWrites(usage: Obj): number {
  const split = obj(usage.cache_creation);
  return (
    n(usage.cache_creation_input_tokens) ||
    n(split.ephemeral_5m_input_tokens) + n(split.ephemeral_1h_input_tokens)
  );
}

/**
 * OpenAI's chat completions, completions or embeddings `usage` (OpenAI API reference, `CompletionUsage`);
 * undefined when `usage` is not an object with a numeric `prompt_tokens`. Cache writes are OpenAI's
 * `prompt_tokens_details.cache_write_tokens` (part of `prompt_tokens`), or reported the way
 * LiteLLM reports an Anthropic model's (`cache_creation_input_tokens`, or
 * `prompt_tokens_details.cache_creation_tokens`, split by `cache_creation`; web searches as
 * `server_tool_use.web_search_requests`) are read too: the gateway's own
 * Anthropic translation writes them (providers/anthropic/response.ts), and so does a LiteLLM upstream.
 */
export function openAiUsage(usage: unknown): Usage | undefined {
  if (!isObj(usage) || typeof usage.prompt_tokens !== "number") return undefined;
  const prompt = n(usage.prompt_tokens);
  const completion = n(usage.completion_tokens);
  const inDetails = obj(usage.prompt_tokens_details);
  const outDetails = obj(usage.completion_tokens_details);
  const read = Math.min(n(inDetails.cached_tokens), prompt);
  const written = Math.min(
    anthropicCacheWrites(usage) || n(inDetails.cache_creation_tokens) || n(inDetails.cache_write_tokens),
    prompt - read,
  );
  const input = prompt - read - written;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof usage.total_tokens === "number" ? n(usage.total_tokens) : prompt + completion,
    breakdown: breakdown({
      input,
      input_audio: Math.min(n(inDetails.audio_tokens), input),
      cache_read: read,
      ...cacheWrites(written, obj(usage.cache_creation)),
      output: completion,
      output_reasoning: Math.min(n(outDetails.reasoning_tokens), completion),
      output_audio: Math.min(n(outDetails.audio_tokens), completion),
      accepted_prediction: n(outDetails.accepted_prediction_tokens),
      rejected_prediction: n(outDetails.rejected_prediction_tokens),
      web_search_requests: n(obj(usage.server_tool_use).web_search_requests),
    }),
  };
}

/**
 * The Responses API's `usage` (OpenAI API reference, `ResponseUsage`: `input_tokens` including
 * `input_tokens_details.cached_tokens` and `cache_write_tokens`, `output_tokens` including `output_tokens_details.reasoning_tokens`) in
 * chat completions' names; undefined when it has no numeric `input_tokens`.
 */
export function responsesApiUsage(usage: unknown): Usage | undefined {
  if (!isObj(usage) || typeof usage.input_tokens !== "number") return undefined;
  const prompt = n(usage.input_tokens);
  const completion = n(usage.output_tokens);
  const details = obj(usage.input_tokens_details);
  const read = Math.min(n(details.cached_tokens), prompt);
  const written = Math.min(n(details.cache_write_tokens), prompt - read);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof usage.total_tokens === "number" ? n(usage.total_tokens) : prompt + completion,
    breakdown: breakdown({
      input: prompt - read - written,
      cache_read: read,
      cache_write_5m: written,
      output: completion,
      output_reasoning: Math.min(n(obj(usage.output_tokens_details).reasoning_tokens), completion),
    }),
  };
}

/**
 * Anthropic's Messages `usage` (Anthropic API reference, Messages: `input_tokens` EXCLUDES cache reads and
 * writes, which come as `cache_read_input_tokens` and `cache_creation_input_tokens`, the latter split by
 * `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`) in chat completions' names, whose
 * `prompt_tokens` counts all three; undefined when `usage` is not an object.
 */
export function anthropicUsage(usage: unknown): Usage | undefined {
  if (!isObj(usage)) return undefined;
  const input = n(usage.input_tokens);
  const read = n(usage.cache_read_input_tokens);
  const split = obj(usage.cache_creation);
  const written = anthropicCacheWrites(usage);
  const prompt = input + read + written;
  const output = n(usage.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    breakdown: breakdown({
      input,
      cache_read: read,
      ...cacheWrites(written, split),
      output,
      web_search_requests: n(obj(usage.server_tool_use).web_search_requests),
    }),
  };
}

/**
 * `usage` with its output replaced by `outputTokens` (a stream whose output was counted on the way, or cut at its
 * reservation): the input side and its breakdown kept, the output's parts dropped (what they were is unknown).
 */
export function withOutput(usage: Usage, outputTokens: number): Usage {
  const out: Usage = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: outputTokens,
    total_tokens: usage.prompt_tokens + outputTokens,
  };
  if (usage.breakdown !== undefined)
    out.breakdown = {
      ...breakdown({ ...usage.breakdown, output: outputTokens }),
      output_reasoning: 0,
      output_audio: 0,
      accepted_prediction: 0,
      rejected_prediction: 0,
    };
  return out;
}
