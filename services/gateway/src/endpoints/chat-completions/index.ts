/**
 * `POST /v1/chat/completions` (and `/chat/completions`): OpenAI's chat completions API (OpenAI API reference,
 * "Create chat completion") in front of the registered deployments, through the pipeline. Every provider serves
 * it: it is also what the other endpoints translate to for deployments that lack their native API.
 *
 * For a stream the gateway always asks the upstream for usage (`stream_options.include_usage`) so it can count
 * tokens, and hides it again from clients that did not ask. A request without `max_tokens` or
 * `max_completion_tokens` goes upstream as it came, unless its budgets cannot pay for the model's maximum output:
 * then it gets the cap they can pay for as `max_completion_tokens` (OpenAI's current name, which reasoning models
 * require and vLLM, llama.cpp and Anthropic's compatibility layer accept; `cost/reservation.ts`).
 */

import type { Endpoint } from "../../pipeline/endpoint.js";
import { answerJson, type JsonAnswerFormat } from "../../pipeline/steps/answer-json.js";
import { answerStream } from "../../pipeline/steps/answer-stream.js";
import { forwardedCall, send } from "../../pipeline/steps/send.js";
import { openAiUsage } from "../../usage/provider-usage.js";
import { chatCompletionsCache, wholeChatCompletion } from "./cache.js";
import { type ChatCompletionRequest, parseChatCompletion } from "./schema.js";
import { chatCompletionTexts, chatRequestTexts } from "./texts.js";

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
  cacheable: wholeChatCompletion,
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
  output: (body) => ({ cap: body.max_completion_tokens ?? body.max_tokens, choices: body.n ?? 1 }),
  inputTexts: chatRequestTexts,
  send(call, deps) {
    return send(call, deps.router, forwardedCall(call, "chat/completions", "max_completion_tokens", true));
  },
  answer(call, upstream, deps, request, reply) {
    if (!call.stream) return answerJson(call, upstream, deps, reply, chatCompletionAnswer);
    return answerStream(call, upstream, deps, request, reply, {
      stripUsage: call.body.stream_options?.include_usage !== true,
      cacheable: wholeChatCompletion,
    });
  },
  cache: { ...chatCompletionsCache, output: chatCompletionAnswer.output },
};
