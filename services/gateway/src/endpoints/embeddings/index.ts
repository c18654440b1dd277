/**
 * `POST /v1/embeddings` (and `/embeddings`): OpenAI's embeddings API (OpenAI API reference, "Create
 * embeddings") in front of the registered deployments, through the pipeline. Sent natively to deployments whose
 * provider serves `/embeddings` (an alias with a deployment that does not, e.g. an `anthropic/` one, is refused
 * with a 400 naming the model). Never streamed; priced per input token (`usage.prompt_tokens`, no completion
 * tokens, so nothing is reserved for output). The input guardrails read the input strings (token-id arrays
 * carry no text); the answer is vectors, so no output guard applies. `encoding_format: "base64"` is passed
 * through: the upstream encodes.
 */

import type { Endpoint } from "../../pipeline/endpoint.js";
import { answerJson, type JsonAnswerFormat } from "../../pipeline/steps/answer-json.js";
import { replayAnswer } from "../../pipeline/steps/cache-replay.js";
import { requireNativeApi } from "../../pipeline/steps/native-api.js";
import { send } from "../../pipeline/steps/send.js";
import { forwardable } from "../../providers/openai-compatible/forward-json.js";
import { openAiUsage } from "../../usage/provider-usage.js";
import type { Usage } from "../../usage/types.js";
import { type EmbeddingRequest, parseEmbedding } from "./schema.js";
import { embeddingInputTexts } from "./texts.js";

/**
 * An embeddings answer's usage (`{prompt_tokens, total_tokens}`, OpenAI's `CreateEmbeddingResponse`) in chat's
 * names, with 0 completion tokens; undefined when it has none.
 */
export function embeddingUsage(answer: unknown): Usage | undefined {
  return openAiUsage((answer as { usage?: unknown } | null)?.usage);
}

/** How an embeddings answer is read: usage only; the vectors are not recorded as output. */
export const embeddingAnswer: JsonAnswerFormat = {
  usage: embeddingUsage,
  output: () => undefined,
  // Vectors are whole or absent: any answer with data may be stored.
  cacheable: (answer) => Array.isArray(answer.data) && answer.data.length > 0,
};

/** The embeddings endpoint. */
export const embeddings: Endpoint<EmbeddingRequest> = {
  paths: ["/v1/embeddings", "/embeddings"],
  callType: "aembedding",
  parse: parseEmbedding,
  clientInput: (raw) => raw.input,
  isStream: () => false,
  output: () => ({ cap: 0, choices: 1 }),
  inputTexts: embeddingInputTexts,
  precheck(call) {
    requireNativeApi(call, "embeddings", "embeddings");
  },
  send(call, deps) {
    const json = call.json === undefined ? undefined : forwardable(call.json, call.body, false);
    return send(call, deps.router, { api: "embeddings", body: call.body, json });
  },
  answer: (call, upstream, deps, _request, reply) => answerJson(call, upstream, deps, reply, embeddingAnswer),
  // Never streamed: a hit is always the stored JSON.
  cache: { replay: replayAnswer(() => []) },
};
