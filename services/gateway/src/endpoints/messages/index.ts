/**
 * `POST /v1/messages`: Anthropic's Messages API (Anthropic API reference, "Messages"; what Claude Code and the
 * Anthropic SDKs send) in front of the registered deployments, through the pipeline. LiteLLM's `call_type`
 * `anthropic_messages`. The key comes in `x-api-key` (the SDKs' default) or `Authorization: Bearer`; errors are
 * Anthropic-shaped (`errors/anthropic-error.ts`).
 *
 * An alias whose every deployment (fallbacks included) serves Messages natively (`anthropic/…`) gets the body
 * as the client sent it, and its answer or event stream back unchanged (`pipeline/steps/answer-native.ts`, read by
 * `native-events.ts`: cut at the reservation, ended after the idle timeout, output-guarded). Any other
 * alias is translated: the request to chat completions (`to-chat.ts`), the answer back to a Message
 * (`from-chat.ts`) and a stream's chunks to Messages events (`stream-events.ts`), so every deployment that
 * speaks OpenAI's chat completions serves Anthropic's clients.
 */

import type { Endpoint } from "../../pipeline/endpoint.js";
import { answerJson, type JsonAnswerFormat } from "../../pipeline/steps/answer-json.js";
import { answerNativeStream } from "../../pipeline/steps/answer-native.js";
import { answerStream } from "../../pipeline/steps/answer-stream.js";
import { servesNatively } from "../../pipeline/steps/native-api.js";
import { send } from "../../pipeline/steps/send.js";
import type { CallContext } from "../../pipeline/types.js";
import { forwardable } from "../../providers/openai-compatible/forward-json.js";
import { anthropicUsage } from "../../usage/provider-usage.js";
import { assemblingReader, messagesCache, wholeMessage } from "./cache.js";
import { fromChatCompletion } from "./from-chat.js";
import { messagesEventReader } from "./native-events.js";
import { type MessagesRequest, parseMessagesRequest } from "./schema.js";
import { messagesStreamEncoder } from "./stream-events.js";
import { messageAnswerTexts, messagesRequestTexts } from "./texts.js";
import { toChatRequest } from "./to-chat.js";

/** The model's input in a Messages body (`Endpoint.clientInput`): its `system` and `messages`. */
export const messagesInput = (raw: Record<string, unknown>): unknown => ({
  system: raw.system,
  messages: raw.messages,
});

/** Calls sent natively (the answer step reads them as Messages, not chat completions). */
const native = new WeakSet<CallContext>();

/** How a Message object is read (a native answer, or a translated one). */
export const messageAnswer: JsonAnswerFormat = {
  usage: (answer) => anthropicUsage((answer as { usage?: unknown } | null)?.usage),
  output: (answer) => structuredClone((answer as { content?: unknown } | null)?.content),
  outputTexts: messageAnswerTexts,
  cacheable: wholeMessage,
};

/**
 * A translated call's answer read as a Message: the upstream's `chat.completion` (as it came, or assembled from a
 * stream, `readAssembled` in `pipeline/steps/answer-json.ts`) turned into a Message before anything reads it.
 */
const translatedMessage: JsonAnswerFormat = { ...messageAnswer, translate: fromChatCompletion };

/** The Messages endpoint. */
export const messages: Endpoint<MessagesRequest> = {
  paths: ["/v1/messages"],
  callType: "anthropic_messages",
  routeConfig: { errorFormat: "anthropic", apiKeyHeader: true },
  parse: parseMessagesRequest,
  clientInput: messagesInput,
  isStream: (body) => body.stream === true,
  // `max_tokens` is required: it is the reservation's output.
  output: (body) => ({ cap: body.max_tokens, choices: 1 }),
  inputTexts: messagesRequestTexts,
  send(call, deps) {
    const { body } = call;
    if (servesNatively(call, "messages")) {
      native.add(call);
      // The client's own text goes upstream (only `model` changes); never with chat's stream_options added.
      const json = call.json === undefined ? undefined : forwardable(call.json, body, false);
      return send(call, deps.router, { api: "messages", body, json });
    }
    return send(call, deps.router, { api: "chat/completions", body: toChatRequest(body) });
  },
  async answer(call, upstream, deps, request, reply) {
    if (native.has(call)) {
      if (!call.stream) return answerJson(call, upstream, deps, reply, messageAnswer);
      const assembled = assemblingReader(messagesEventReader());
      return answerNativeStream(call, upstream, deps, request, reply, assembled.reader, assembled.cache);
    }
    if (!call.stream) return answerJson(call, upstream, deps, reply, translatedMessage);
    return answerStream(call, upstream, deps, request, reply, {
      stripUsage: false,
      encoder: messagesStreamEncoder(call.body.model, call.promptEstimate),
      cacheable: wholeMessage,
      storedAs: fromChatCompletion,
    });
  },
  cache: { ...messagesCache, output: messageAnswer.output },
};
