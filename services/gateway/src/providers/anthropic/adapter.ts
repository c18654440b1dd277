/**
 * The adapter for Anthropic's native Messages API (Anthropic API reference "Messages": `POST {api_base}/messages`
 * with `x-api-key`, `anthropic-version: 2023-06-01` and `content-type: application/json`):
 * - api `messages`: the body is sent as it came (the client already speaks Messages) and the answer is passed
 *   on untranslated; only the deployment's `cache_control_injection_points` (cache-injection.ts) are added;
 * - api `chat/completions`: the chat body is translated to a Messages body (request.ts) and the answer back
 *   into a `chat.completion` (response.ts) or, streamed, into `chat.completion.chunk` events (stream.ts); the
 *   injection points are applied to the chat messages before the translation.
 * Either way Anthropic's rate-limit headers are also given under the names the gateway's metrics read
 * (`anthropic-ratelimit-requests-remaining` → `x-ratelimit-remaining-requests`, `-tokens-remaining` →
 * `x-ratelimit-remaining-tokens`), and error bodies are read in Anthropic's shape.
 */
import type { Deployment } from "../../config/types.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { ProviderAdapter, UpstreamAnswer, UpstreamApi, UpstreamRequest } from "../types.js";
import { translatedAnswer, WholeBodyTransform } from "./answer-body.js";
import { type CacheControlInjectionPoint, injectIntoChat, injectIntoMessages } from "./cache-injection.js";
import { toAnthropicRequest } from "./request.js";
import { type AnthropicAnswer, anthropicErrorMessage, toChatCompletion } from "./response.js";
import { ChatChunkStream } from "./stream.js";

/** The API version the translation is written against (Anthropic API reference, "Versions"). */
export const ANTHROPIC_VERSION = "2023-06-01";

interface Target {
  origin: string;
  /** `{api_base path}/messages`, e.g. `/v1/messages`. */
  path: string;
  headers: Record<string, string>;
}

/** Parsed api_base per deployment, so the hot path never parses a URL. */
const targets = new WeakMap<Deployment, Target>();

function targetFor(deployment: Deployment): Target {
  let target = targets.get(deployment);
  if (target === undefined) {
    const base = new URL(deployment.apiBase);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "anthropic-version": ANTHROPIC_VERSION,
    };
    if (deployment.apiKey !== undefined) headers["x-api-key"] = deployment.apiKey;
    target = { origin: base.origin, path: `${base.pathname.replace(/\/$/, "")}/messages`, headers };
    targets.set(deployment, target);
  }
  return target;
}

/** Anthropic's rate-limit headers → OpenAI's names, added to a copy of `headers` (without content-length). */
export function withRateLimitNames(headers: UpstreamAnswer["headers"]): UpstreamAnswer["headers"] {
  const { "content-length": _length, ...out } = headers;
  const requests = headers["anthropic-ratelimit-requests-remaining"];
  const tokens = headers["anthropic-ratelimit-tokens-remaining"];
  if (requests !== undefined) out["x-ratelimit-remaining-requests"] = requests;
  if (tokens !== undefined) out["x-ratelimit-remaining-tokens"] = tokens;
  return out;
}

/** A `chat.completion` (JSON text) for Anthropic's message text; a body that is not JSON is passed on as is. */
function chatCompletionText(text: string): string {
  let message: AnthropicAnswer;
  try {
    message = JSON.parse(text) as AnthropicAnswer;
  } catch {
    return text; // the answer step reports a body that is not JSON
  }
  return JSON.stringify(toChatCompletion(message, Math.floor(Date.now() / 1000)));
}

/**
 * The request for a chat completion, translated, with the answer's translation attached. The deployment's
 * `model_info.max_output_tokens` is the `max_tokens` Anthropic requires when the request sets none.
 */
function chatRequest(target: Target, json: string, deployment: Deployment): UpstreamRequest {
  const chat = JSON.parse(json) as Record<string, unknown>;
  const points = deployment.cacheControlInjectionPoints;
  if (points !== undefined) injectIntoChat(chat, points);
  const body = toAnthropicRequest(chat, deployment.maxOutputTokens);
  const includeUsage = (chat.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage;
  return {
    origin: target.origin,
    path: target.path,
    headers: target.headers,
    body: JSON.stringify(body),
    translateAnswer: (answer) =>
      translatedAnswer(
        answer,
        body.stream === true
          ? new ChatChunkStream(includeUsage === true, Math.floor(Date.now() / 1000))
          : new WholeBodyTransform(chatCompletionText),
        withRateLimitNames(answer.headers),
      ),
  };
}

/** A Messages body with the deployment's cache_control injection points applied; `json` itself without any. */
function withInjectedCacheControl(
  json: string,
  points: readonly CacheControlInjectionPoint[] | undefined,
): string {
  if (points === undefined || points.length === 0) return json;
  const body = JSON.parse(json) as Record<string, unknown>;
  injectIntoMessages(body, points);
  return JSON.stringify(body);
}

/** Anthropic's adapter: chat completions (translated), Messages and its token count (native). */
export const anthropicAdapter: ProviderAdapter = {
  provider: "anthropic",
  serves: (_deployment, api) =>
    api === "chat/completions" || api === "messages" || api === "messages/count_tokens",
  request(api: UpstreamApi, deployment: Deployment, json: string): UpstreamRequest {
    const target = targetFor(deployment);
    if (api === "chat/completions") return chatRequest(target, json, deployment);
    if (api === "messages/count_tokens") {
      // Anthropic API reference, "Count Message tokens": `POST /v1/messages/count_tokens` → `{"input_tokens": N}`.
      return {
        origin: target.origin,
        path: `${target.path}/count_tokens`,
        headers: target.headers,
        body: json,
      };
    }
    if (api !== "messages") {
      throw new GatewayError(400, `Anthropic models do not serve the ${api} API.`, {
        type: "invalid_request_error",
      });
    }
    return {
      origin: target.origin,
      path: target.path,
      headers: target.headers,
      body: withInjectedCacheControl(json, deployment.cacheControlInjectionPoints),
      translateAnswer: (answer) => ({ ...answer, headers: withRateLimitNames(answer.headers) }),
    };
  },
  errorMessage: anthropicErrorMessage,
};
