/**
 * Pre-call estimates used to reserve budget and count tokens before the upstream answers. They err high:
 * a reservation that is too small lets concurrent calls overspend.
 */

/**
 * Output tokens per choice assumed (`cost/reservation.ts`), and sent as the cap while a budget is in force, for
 * a deployment whose `model_info.max_output_tokens` is not set; also the `max_tokens` a chat request translated
 * to Anthropic's Messages API gets when it sets none (Anthropic requires one).
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** Bytes of `value` as compact JSON (UTF-8), computed by walking it: no serialisation, no recursion. */
export function jsonBytes(value: unknown): number {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") bytes += Buffer.byteLength(item) + 2;
    else if (typeof item === "number" || typeof item === "boolean") bytes += String(item).length;
    else if (item === null || item === undefined) bytes += 4;
    else if (Array.isArray(item)) {
      bytes += 2 + Math.max(0, item.length - 1);
      for (const element of item) pending.push(element);
    } else if (typeof item === "object") {
      const entries = Object.entries(item);
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [key, element] of entries) {
        bytes += Buffer.byteLength(key) + 3;
        pending.push(element);
      }
    }
  }
  return bytes;
}

/**
 * Prompt tokens of a parsed request body (the whole body: messages, tools, …): one token per four bytes of its
 * JSON, an overestimate for text because the JSON syntax is counted too. Computed from the parsed body, never
 * from a `content-length` header (a chunked upload sends none). Cheap: no tokenizer on the hot path.
 */
export function estimatePromptTokens(body: unknown): number {
  return Math.ceil(jsonBytes(body) / 4);
}

/**
 * Prompt tokens of a request body from its JSON text as the client sent it: one token per four bytes (UTF-8),
 * whitespace and escapes included, so it errs higher than {@link estimatePromptTokens} of the parsed body.
 * The bytes are counted natively, without walking the body. Never from a `content-length` header.
 */
export function estimatePromptTokensOfText(json: string): number {
  return Math.ceil(Buffer.byteLength(json) / 4);
}
