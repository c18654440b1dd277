/**
 * The legacy text completions request (OpenAI API reference, "Create completion", `CreateCompletionRequest`):
 * `prompt` as a string, an array of strings, an array of token ids or an array of token-id arrays. Fields the
 * gateway acts on are typed (`max_tokens`, `n` and `best_of` for the reservation, `stream` and
 * `stream_options.include_usage` for the relay); every other field (`suffix`, `echo`, `logprobs`, `stop`, …)
 * passes through.
 */
import { z } from "zod";
import { parseBody } from "../parse-body.js";

const tokenId = z.number().int().nonnegative();

export const completionSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.union([
    z.string(),
    z.array(z.string()).min(1),
    z.array(tokenId).min(1),
    z.array(z.array(tokenId).min(1)).min(1),
  ]),
  suffix: z.string().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  max_tokens: z.number().int().nonnegative().nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  best_of: z.number().int().min(0).max(20).nullish(),
});

/** A validated text completions request. */
export type CompletionRequest = z.infer<typeof completionSchema>;

const PROMPT_SHAPES =
  "must be a string, an array of strings, an array of token ids or an array of token-id arrays";

/**
 * Validates a parsed JSON body; the result is a copy down to `prompt`'s arrays (the input guard may rewrite
 * them without touching the client's body).
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field in `param` and the message.
 */
export function parseCompletion(body: unknown): CompletionRequest {
  return parseBody(completionSchema, body, "model and prompt", { prompt: PROMPT_SHAPES });
}

/**
 * Completions the upstream generates (and bills) for `body`: `best_of` (generated server-side, the best `n`
 * returned) or `n`, for each prompt of a batch (an array of strings or of token-id arrays). ≥ 1.
 */
export function completionChoices(body: CompletionRequest): number {
  const perPrompt = Math.max(body.n ?? 1, body.best_of ?? 1);
  const { prompt } = body;
  const prompts =
    Array.isArray(prompt) && prompt.length > 0 && typeof prompt[0] !== "number" ? prompt.length : 1;
  return perPrompt * prompts;
}
