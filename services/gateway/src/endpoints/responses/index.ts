/**
 * `POST /v1/responses` (and `/responses`): OpenAI's Responses API (OpenAI API reference, "Create a model
 * response") in front of the registered deployments, through the pipeline; `call_type` `aresponses`.
 *
 * Two paths, chosen per call from the deployments the alias (and its fallbacks) may route to:
 *
 * - native: when every one of them serves `/responses` (`ProviderAdapter.serves(deployment, "responses")`: OpenAI
 *   at its default API base, or any `openai/` deployment whose `model_info.supported_endpoints` lists
 *   `/v1/responses`), the client's request goes upstream as it is, unknown fields included; a JSON answer is
 *   relayed with its usage read from `usage.input_tokens` / `output_tokens`, a stream event by event
 *   (`pipeline/steps/answer-native.ts`, read by `native-events.ts`), with the chat stream's bounds.
 * - translated: otherwise the request becomes a chat completion (`to-chat.ts`), and the chat answer becomes a
 *   `response` object (`response-object.ts`) or, streamed, Responses events (`stream-encoder.ts`).
 *
 * State: the gateway stores no responses. `store` is accepted (and forwarded on the native path, where the
 * upstream keeps what it keeps); `previous_response_id` works only on the native path, and only for a response
 * the caller's key created (`ownership.ts`: every relayed response id is recorded with its owner; another key's
 * gets OpenAI's 404 `previous_response_not_found` before anything goes upstream). On the translated path it is
 * refused with a 400 `invalid_request_error` (`param: previous_response_id`): send the whole conversation as
 * `input` instead.
 */

import { invalidRequest } from "../../errors/gateway-error.js";
import type { Endpoint } from "../../pipeline/endpoint.js";
import { answerJson, type JsonAnswerFormat } from "../../pipeline/steps/answer-json.js";
import { answerNativeStream } from "../../pipeline/steps/answer-native.js";
import { answerStream } from "../../pipeline/steps/answer-stream.js";
import { servesNatively } from "../../pipeline/steps/native-api.js";
import { forwardedCall, send } from "../../pipeline/steps/send.js";
import { responsesApiUsage } from "../../usage/provider-usage.js";
import { completedResponseReader, responsesCache, wholeResponse } from "./cache.js";
import { responsesEventReader } from "./native-events.js";
import { checkPrevious, idNotingReader, recordRelayed } from "./ownership.js";
import { fromChatCompletion } from "./response-object.js";
import { parseResponsesRequest, type ResponsesRequest } from "./schema.js";
import { ResponsesStreamEncoder } from "./stream-encoder.js";
import { responseOutputTexts, responsesRequestTexts } from "./texts.js";
import { toChatRequest } from "./to-chat.js";

/** A copy of a response's `output` (what tracing records as the output). */
const outputOf = (response: unknown): unknown => {
  const output = (response as { output?: unknown } | null)?.output;
  return output === undefined ? undefined : structuredClone(output);
};

/** How a `response` object is read (native answers, and translated ones once rewritten). */
export const responseAnswer: JsonAnswerFormat = {
  usage: (answer) => responsesApiUsage((answer as { usage?: unknown } | null)?.usage),
  output: outputOf,
  outputTexts: responseOutputTexts,
  cacheable: wholeResponse,
};

/** The 400 for `previous_response_id` on the translated path. */
const noState = () =>
  invalidRequest(
    "previous_response_id is not supported for this model: the gateway keeps no conversation state, and this model is served through chat completions. Send the full conversation as input instead.",
    "previous_response_id",
  );

/**
 * The 400 for `background: true` on a native upstream: a background response is answered `queued`, with no
 * usage and no output, and produced later, where neither the budget nor the output guardrails see it.
 */
const noBackground = () =>
  invalidRequest(
    "background is not supported through this gateway: a background response is produced after the call is answered, where budgets and guardrails cannot see it. Send the request without background (stream it for long answers).",
    "background",
  );

/** Calls that went the translated way (their answer is a chat completion to rewrite). */
const translated = new WeakSet<object>();

/** The Responses endpoint. */
export const responses: Endpoint<ResponsesRequest> = {
  paths: ["/v1/responses", "/responses"],
  callType: "aresponses",
  parse: parseResponsesRequest,
  clientInput: (raw) => raw.input,
  isStream: (body) => body.stream === true,
  output: (body) => ({ cap: body.max_output_tokens ?? undefined, choices: 1 }),
  inputTexts: responsesRequestTexts,
  precheck(call, deps) {
    const { previous_response_id: previous, background } = call.body;
    if (!servesNatively(call, "responses")) {
      if (previous != null) throw noState();
      return;
    }
    if (background === true) throw noBackground();
    if (typeof previous === "string") return checkPrevious(call, deps, previous);
  },
  send(call, deps) {
    if (servesNatively(call, "responses")) {
      // Never asked for chat's `stream_options.include_usage`: Responses streams carry usage in `response.completed`.
      return send(call, deps.router, forwardedCall(call, "responses", "max_output_tokens", false));
    }
    const cap = call.reservation?.cap?.tokens;
    // The output cap the budgets can pay for, when the gateway adds one (`cost/reservation.ts`).
    const body = cap === undefined ? call.body : { ...call.body, max_output_tokens: cap };
    translated.add(call);
    return send(call, deps.router, { api: "chat/completions", body: toChatRequest(body, call.stream) });
  },
  async answer(call, upstream, deps, request, reply) {
    const native = !translated.has(call);
    if (call.stream) {
      if (native) {
        const ids = idNotingReader(responsesEventReader());
        const noted = completedResponseReader(ids.reader);
        await answerNativeStream(call, upstream, deps, request, reply, noted.reader, noted.cache);
        return recordRelayed(call, deps, ids.id());
      }
      return answerStream(call, upstream, deps, request, reply, {
        stripUsage: false,
        encoder: new ResponsesStreamEncoder(call.body),
        cacheable: wholeResponse,
        storedAs: (completion) => fromChatCompletion(call.body, completion),
      });
    }
    if (native) {
      const format = {
        ...responseAnswer,
        answered: (answer: unknown) => recordRelayed(call, deps, (answer as { id?: unknown } | null)?.id),
      };
      return answerJson(call, upstream, deps, reply, format);
    }
    return answerJson(call, upstream, deps, reply, {
      ...responseAnswer,
      // The chat completion becomes a `response` object before the guard and the client see it.
      translate: (completion) => fromChatCompletion(call.body, completion as Record<string, unknown>),
    });
  },
  cache: { ...responsesCache, output: responseAnswer.output },
};
