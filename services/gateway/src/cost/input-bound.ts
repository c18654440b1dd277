/**
 * An upper bound of the input tokens a request body costs, for the budget reservation: never below what the
 * upstream will count, so that concurrent calls cannot spend past a budget by sending text that tokenizes
 * densely (CJK, emoji, digits: 1 token per 1–3 bytes, where the old "4 bytes a token" rule reserved a quarter of
 * what they cost).
 *
 * - When every deployment the call may reach is an OpenAI-family model, each string is counted with that
 *   model's own tokenizer (`gpt-tokenizer`: `o200k_base` or `cl100k_base`, `streaming/output-meter.ts`
 *   `tokenizerFor`; the larger count when the plan mixes both), in slices and within a budget per call (past
 *   it, bytes). Within ~10 % of the real count for English up to ~40 KB.
 * - Otherwise each string counts its UTF-8 bytes: every tokenizer the gateway may meet (byte-level BPE, and
 *   SentencePiece with byte fallback) spends at least one byte per token, so bytes bound tokens from above.
 * - Images count {@link IMAGE_TOKEN_BOUND} (or more for a model whose formula is larger, see
 *   {@link imageTokenBound}) whatever their URL or data, since a short URL can stand for a large image.
 * - Numbers (token-id prompts, `n`, temperatures) count one token each; every object key and every string one
 *   more token, which covers the chat template's per-message tokens (OpenAI: 3 a message and 3 to prime the
 *   answer; the keys `role` and `content` and their two values give 4).
 *
 * The walk is iterative (no recursion on deeply nested bodies) and never serialises the body.
 */
import type { Deployment } from "../config/types.js";
import { tokenizerFor } from "../streaming/output-meter.js";

/** Counts tokens (or a bound of them) of one string. */
type Count = (text: string) => number;

/** Tokens one image may cost on a model without a documented, smaller formula (Qwen2-VL's default maximum: 16,384). */
export const IMAGE_TOKEN_BOUND = 16_384;

/**
 * Documented per-image maxima (tokens), by model-name prefix, longest first. OpenAI ("Images and vision",
 * calculating costs): GPT-4o mini 2,833 + 5,667 per 512-px tile, at most 8 tiles at high detail → 48,169;
 * GPT-4o and GPT-4.1 at most 85 + 170 × 8 = 1,445; patch-based models at most 1,536 patches × their multiplier
 * (gpt-4.1-nano 2.46 → 3,779), so 4,000 covers every other OpenAI model. Anthropic ("Vision", image costs):
 * images above ~1.15 megapixels are scaled down, about 1,600 tokens at most; 4,000 leaves room.
 */
const IMAGE_BOUNDS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ["gpt-4o-mini", 48_169],
  ["gpt-", 4_000],
  ["chatgpt-", 4_000],
  ["o1", 4_000],
  ["o3", 4_000],
  ["o4", 4_000],
  ["claude-", 4_000],
];

/** The most tokens one image may cost on `deployment`'s model ({@link IMAGE_BOUNDS}, else {@link IMAGE_TOKEN_BOUND}). */
export function imageTokenBound(deployment: Deployment): number {
  const name = (deployment.baseModel ?? deployment.upstreamModel).toLowerCase();
  for (const [prefix, tokens] of IMAGE_BOUNDS) if (name.startsWith(prefix)) return tokens;
  return IMAGE_TOKEN_BOUND;
}

/** Content-part and item types whose payload is an image (chat `image_url`, Responses `input_image`, Messages `image`). */
const IMAGE_TYPES = new Set(["image_url", "input_image", "image"]);

const utf8Bytes: Count = (text) => Buffer.byteLength(text);

/**
 * Characters tokenized at a time. BPE's cost grows with the square of a pre-token's length, and a text without
 * spaces (CJK) is one long pre-token: 30,000 CJK characters took 8.4 s whole and 29 ms in 256-character
 * slices. Slicing only ever adds tokens at the cuts (English: +2 %), so the count stays an upper bound.
 */
const SLICE_CHARS = 256;

/**
 * Tokenizer time one call may spend, ms, once it has counted {@link FREE_TOKENS}. English tokenizes at ~20 MB/s,
 * but text made to be expensive (random letters or symbols, rare code points) at ~100–200 KB/s (~6 µs a token);
 * past this budget, or past {@link MAX_TOKENIZED} tokens, the rest of the call's text counts its UTF-8 bytes,
 * which bound tokens too, so the reservation stays an upper bound and the event loop is never held for long.
 */
export const TOKENIZER_BUDGET_MS = 5;

/**
 * Tokens counted before the clock is read at all (≈ 5 KB of English, at most ~6 ms of the most expensive text):
 * the bound of an ordinary prompt never depends on how busy the machine is.
 */
export const FREE_TOKENS = 1_000;

/** The most tokens one call counts with the tokenizer (≈ 40 KB of English); the rest counts bytes. */
export const MAX_TOKENIZED = 8_000;

/**
 * The slice of `text` at `start` as a string of its own. A plain `slice` keeps the whole text alive behind it, and
 * the tokenizer's merge cache keeps its pieces: that held whole request bodies (hundreds of MB) after their calls.
 */
function detached(text: string, start: number): string {
  return Buffer.from(text.slice(start, start + SLICE_CHARS), "utf16le").toString("utf16le");
}

/** Counts with `counts` (the larger), slice by slice, within the budget (see {@link TOKENIZER_BUDGET_MS}); then bytes. */
function budgeted(counts: readonly Count[], budgetMs: number): Count {
  const started = performance.now();
  let counted = 0;
  let spent = false;
  const once = (text: string) => {
    if (spent) return utf8Bytes(text);
    let most = 0;
    for (const count of counts) most = Math.max(most, count(text));
    counted += most;
    if (counted > FREE_TOKENS && Number.isFinite(budgetMs))
      spent = counted > MAX_TOKENIZED || performance.now() - started > budgetMs;
    return most;
  };
  return (text) => {
    if (text.length <= SLICE_CHARS) return once(text);
    let tokens = 0;
    for (let i = 0; i < text.length; i += SLICE_CHARS) tokens += once(detached(text, i));
    return tokens;
  };
}

/** The larger per-image bound of `deployments` ({@link imageTokenBound}). */
function imageTokensOf(deployments: readonly Deployment[]): number {
  let tokens = 0;
  for (const d of deployments) tokens = Math.max(tokens, imageTokenBound(d));
  return tokens;
}

/**
 * The tokenizers of `deployments` when every one of them is an OpenAI-family model (`tokenizerFor`); undefined
 * when any is not (or there is none).
 */
function tokenizersOf(deployments: readonly Deployment[]): Count[] | undefined {
  const counts = new Set<Count>();
  for (const d of deployments) {
    const count = tokenizerFor(d.baseModel ?? d.upstreamModel);
    if (count === undefined) return undefined;
    counts.add(count);
  }
  return counts.size === 0 ? undefined : [...counts];
}

/**
 * Input tokens of `body` bounded from above by UTF-8 bytes, for a call that may reach `deployments`: a bound for
 * every model (see the module comment), at the cost of one byte count a string. Tokens; ≥ 1.
 */
export function byteBound(body: unknown, deployments: readonly Deployment[]): number {
  return boundWith(body, { count: utf8Bytes, imageTokens: imageTokensOf(deployments) });
}

/**
 * Input tokens of `body` counted by the models' own tokenizer (the larger count when the plan mixes two), within
 * `budgetMs` (default {@link TOKENIZER_BUDGET_MS}; `Infinity`: none): tighter than {@link byteBound} by ~4× for
 * English. Undefined when some deployment of the plan has no tokenizer the gateway knows.
 */
export function tokenizerBound(
  body: unknown,
  deployments: readonly Deployment[],
  budgetMs = TOKENIZER_BUDGET_MS,
): number | undefined {
  const counts = tokenizersOf(deployments);
  if (counts === undefined) return undefined;
  return boundWith(body, { count: budgeted(counts, budgetMs), imageTokens: imageTokensOf(deployments) });
}

/**
 * Input tokens of `body` bounded from above (see the module comment), for a call that may reach
 * `deployments`: {@link tokenizerBound} where it applies, else {@link byteBound}. Tokens; ≥ 1.
 */
export function inputTokenBound(
  body: unknown,
  deployments: readonly Deployment[],
  budgetMs = TOKENIZER_BUDGET_MS,
): number {
  return tokenizerBound(body, deployments, budgetMs) ?? byteBound(body, deployments);
}

/** How strings are counted (a tokenizer, or bytes) and what an image costs, tokens. */
interface InputCounter {
  count: Count;
  imageTokens: number;
}

/** The bound of `body` with a given counter (the walk the module comment describes). */
function boundWith(body: unknown, counter: InputCounter): number {
  let tokens = 1;
  // Items, and whether they sit inside an image part (where the image's own data is not text).
  const pending: unknown[] = [body];
  const inImage: boolean[] = [false];
  while (pending.length > 0) {
    const item = pending.pop();
    const image = inImage.pop()!;
    if (typeof item === "string") {
      if (!(image && isImageData(item))) tokens += counter.count(item) + 1;
    } else if (typeof item === "number" || typeof item === "boolean") tokens += 1;
    else if (Array.isArray(item)) {
      for (const element of item) {
        pending.push(element);
        inImage.push(image);
      }
    } else if (item !== null && typeof item === "object") {
      const record = item as Record<string, unknown>;
      const opensImage = typeof record.type === "string" && IMAGE_TYPES.has(record.type);
      if (opensImage) tokens += counter.imageTokens;
      for (const key in record) {
        tokens += 1;
        // An image's base64 payload (`data` of a Messages image source) is its pixels, charged above.
        if ((image || opensImage) && key === "data") continue;
        pending.push(record[key]);
        inImage.push(image || opensImage);
      }
    }
  }
  return tokens;
}

/** A `data:` URL: an inline image's bytes, not text the model reads. */
function isImageData(text: string): boolean {
  return text.startsWith("data:");
}
