/**
 * `POST /v1/chat/completions` (and `/chat/completions`): OpenAI's chat completions API (OpenAI API reference,
 * "Create chat completion") in front of the registered deployments, through the pipeline. Every provider serves
 * it: it is also what the other endpoints translate to for deployments that lack their native API.
 *
 * For a stream the gateway always asks the upstream for usage (`stream_options.include_usage`) so it can count
 * tokens, and hides it again from clients that did not ask. A request without `max_tokens` or
 * `max_completion_tokens` is sent with the gateway's default cap, so that upstreams stop where the reservation
 * does.
 */
import { openAiUsage } from "../../accounting/provider-usage.js";
import { DEFAULT_MAX_TOKENS_ESTIMATE, estimateCompletionTokens } from "../../cost/estimate.js";
import type { Endpoint } from "../../pipeline/endpoint.js";
import { answerJson, answerStream, type JsonAnswerFormat } from "../../pipeline/steps/answer.js";
import { send } from "../../pipeline/steps/send.js";
import { forwardable } from "../../providers/openai-compatible/forward-json.js";
import { type ChatCompletionRequest, parseChatCompletion } from "./schema.js";
import { chatCompletionTexts, chatRequestTexts } from "./texts.js";

/**
 * The output cap sent for a request that sets none (`max_completion_tokens`, OpenAI's current name, which
 * reasoning models require and vLLM, llama.cpp and Anthropic's compatibility layer accept): the figure the
 * budget reservation assumed ({@link DEFAULT_MAX_TOKENS_ESTIMATE}), so the upstream stops where the reservation
 * does instead of the gateway cutting the stream.
 */
const DEFAULT_CAP_MEMBER = `,"max_completion_tokens":${DEFAULT_MAX_TOKENS_ESTIMATE}`;

/** A copy of a completion's first choice's `message` (what tracing records as the output). */
function firstMessage(completion: unknown): unknown {
  const message = (completion as { choices?: Array<{ message?: unknown }> }).choices?.[0]?.message;
  return message === undefined ? undefined : structuredClone(message);
}

/** How a `chat.completion` object is read. */
export const chatCompletionAnswer: JsonAnswerFormat = {
  usage: (answer) => openAiUsage((answer as { usage?: unknown } | null)?.usage),
  output: firstMessage,
  outputTexts: chatCompletionTexts,
};

/** The chat completions endpoint. */
export const chatCompletions: Endpoint<ChatCompletionRequest> = {
  paths: ["/v1/chat/completions", "/chat/completions"],
  callType: "acompletion",
  // The chat's service key books each call on the chat user it names (`users/attribution.ts`).
  userAttribution: true,
  parse: parseChatCompletion,
  clientInput: (raw) => raw.messages,
  isStream: (body) => body.stream === true,
  completionEstimate: (body) => estimateCompletionTokens(body.max_completion_tokens ?? body.max_tokens),
  inputTexts: chatRequestTexts,
  send(call, deps) {
    const { body } = call;
    const uncapped = body.max_completion_tokens === undefined && body.max_tokens === undefined;
    const json =
      call.json === undefined
        ? undefined
        : forwardable(call.json, body, call.stream, uncapped ? DEFAULT_CAP_MEMBER : "");
    let upstreamBody: ChatCompletionRequest = body;
    if (json === undefined && (uncapped || call.stream)) {
      upstreamBody = { ...body };
      if (uncapped) upstreamBody.max_completion_tokens = DEFAULT_MAX_TOKENS_ESTIMATE;
      if (call.stream) upstreamBody.stream_options = { ...body.stream_options, include_usage: true };
    }
    return send(call, deps.router, { api: "chat/completions", body: upstreamBody, json });
  },
  answer(call, upstream, deps, request, reply) {
    if (!call.stream) return answerJson(call, upstream, deps, reply, chatCompletionAnswer);
    return answerStream(call, upstream, deps, request, reply, {
      stripUsage: call.body.stream_options?.include_usage !== true,
    });
  },
};
