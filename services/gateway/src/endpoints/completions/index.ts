/**
 * `POST /v1/completions` (and `/completions`): OpenAI's legacy text completions API (OpenAI API reference,
 * "Create completion") in front of the registered deployments, through the pipeline. Sent natively to
 * deployments whose provider serves `/completions` (an alias with a deployment that does not, e.g. an
 * `anthropic/` one, is refused with a 400 naming the model).
 *
 * The reservation covers `max_tokens` (else the model's maximum output) for each of the `n` (or `best_of`)
 * completions of each prompt of the batch; a cap is added upstream only as `cost/reservation.ts` says. A stream is relayed as
 * `text_completion` chunks (`choices[].text`), its output counted on the way and cut at the reservation; the
 * gateway asks the upstream for usage (`stream_options.include_usage`) and hides it from clients that did not
 * ask. The input guardrails read `prompt` and `suffix`; the output guard reads each choice's `text`, of a
 * non-streamed answer and of a stream's chunks alike.
 */

import type { Endpoint } from "../../pipeline/endpoint.js";
import { answerJson, type JsonAnswerFormat } from "../../pipeline/steps/answer-json.js";
import { answerStream } from "../../pipeline/steps/answer-stream.js";
import { requireNativeApi } from "../../pipeline/steps/native-api.js";
import { forwardedCall, send } from "../../pipeline/steps/send.js";
import { openAiUsage } from "../../usage/provider-usage.js";
import { completionsCache, wholeTextCompletion } from "./cache.js";
import { type CompletionRequest, completionChoices, parseCompletion } from "./schema.js";
import { completionAnswerTexts, completionRequestTexts } from "./texts.js";

/** How a `text_completion` answer is read: its usage, and its first choice's text as the output. */
export const completionAnswer: JsonAnswerFormat = {
  usage: (answer) => openAiUsage((answer as { usage?: unknown } | null)?.usage),
  output: (answer) => (answer as { choices?: Array<{ text?: unknown }> } | null)?.choices?.[0]?.text,
  outputTexts: completionAnswerTexts,
  cacheable: wholeTextCompletion,
};

/** The text completions endpoint. */
export const completions: Endpoint<CompletionRequest> = {
  paths: ["/v1/completions", "/completions"],
  callType: "atext_completion",
  parse: parseCompletion,
  clientInput: (raw) => raw.prompt,
  isStream: (body) => body.stream === true,
  output: (body) => ({ cap: body.max_tokens ?? undefined, choices: completionChoices(body) }),
  inputTexts: completionRequestTexts,
  precheck(call) {
    requireNativeApi(call, "completions", "text completions (/v1/completions)");
  },
  send(call, deps) {
    return send(call, deps.router, forwardedCall(call, "completions", "max_tokens", true));
  },
  answer(call, upstream, deps, request, reply) {
    if (!call.stream) return answerJson(call, upstream, deps, reply, completionAnswer);
    return answerStream(call, upstream, deps, request, reply, {
      stripUsage: call.body.stream_options?.include_usage !== true,
      cacheable: wholeTextCompletion,
    });
  },
  cache: { ...completionsCache, output: completionAnswer.output },
};
