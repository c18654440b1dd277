/**
 * Counts a streamed answer's output tokens as its chunks pass, so that the relay can stop a stream that runs
 * past what the call reserved and book a stream whose upstream sent no `usage`.
 *
 * - OpenAI-family models (`gpt-…`, `chatgpt-…`, `o1`/`o3`/`o4…`, `ft:gpt-…`): their own tokenizer, from
 *   `gpt-tokenizer` (`o200k_base` for GPT-4o, GPT-4.1, GPT-5 and the o-series; `cl100k_base` for GPT-4 and
 *   GPT-3.5), applied to each chunk's text. Each chunk is counted on its own, so a word split across two
 *   chunks may count one token more than the whole text would: the count errs high, never low.
 * - Any other model: an estimate, the larger of the number of chunks carrying text (a server streams at least
 *   one token per such chunk) and a quarter of the text's UTF-8 bytes (the gateway's prompt estimate).
 *
 * The text of a chunk is everything a choice's `delta` carries that the model produced: `content`, `refusal`,
 * `reasoning_content`/`reasoning` (what reasoning servers stream), and each tool call's (or the legacy
 * `function_call`'s) `name` and `arguments`; a legacy completion's `text` too.
 */
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";

/** Counts tokens of a piece of text. */
type Count = (text: string) => number;

/**
 * Special tokens' text (`<|endoftext|>`, `<|im_start|>`, …) counted as the ordinary text it is: `gpt-tokenizer`
 * throws on it by default ("Disallowed special token found"), and a client may send it (the legacy completions'
 * default `stop` is `<|endoftext|>`) or a model write it.
 */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const o200k: Count = (text) => countO200k(text, AS_TEXT);
const cl100k: Count = (text) => countCl100k(text, AS_TEXT);

const O200K_MODELS = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-|o\d)/;
const CL100K_MODELS = /^(gpt-4|gpt-3\.5|gpt-35)/;

/**
 * The tokenizer of an OpenAI-family model, by its name as the upstream knows it (a provider prefix such as
 * `openai/` or `azure/`, and `ft:`, are ignored); undefined for any other model.
 */
export function tokenizerFor(upstreamModel: string): Count | undefined {
  const name = upstreamModel
    .replace(/^[\w-]+\//, "")
    .replace(/^ft:/, "")
    .toLowerCase();
  if (O200K_MODELS.test(name)) return o200k;
  if (CL100K_MODELS.test(name)) return cl100k;
  return undefined;
}

/** The parts of a `chat.completion.chunk` whose text is output (OpenAI API reference, chunk object). */
interface ChunkChoice {
  text?: unknown;
  delta?: {
    content?: unknown;
    refusal?: unknown;
    reasoning_content?: unknown;
    reasoning?: unknown;
    function_call?: { name?: unknown; arguments?: unknown };
    tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }>;
  };
}

/** The output text a parsed chunk carries, all choices together ("" for none). */
export function chunkText(chunk: { choices?: unknown }): string {
  if (!Array.isArray(chunk.choices)) return "";
  let text = "";
  const add = (value: unknown) => {
    if (typeof value === "string") text += value;
  };
  for (const choice of chunk.choices as ChunkChoice[]) {
    if (choice === null || typeof choice !== "object") continue;
    add(choice.text);
    const delta = choice.delta;
    if (delta === null || typeof delta !== "object") continue;
    add(delta.content);
    add(delta.refusal);
    add(delta.reasoning_content);
    add(delta.reasoning);
    add(delta.function_call?.name);
    add(delta.function_call?.arguments);
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        add(call?.function?.name);
        add(call?.function?.arguments);
      }
    }
  }
  return text;
}

/** A running count of output tokens; see the module comment. */
export class OutputMeter {
  /** Output tokens counted so far (committed chunks only). */
  tokens = 0;
  private bytes = 0;
  private textChunks = 0;
  private pendingTokens = 0;
  private pendingBytes = 0;
  private pendingTextChunks = 0;

  /**
   * @param limit the call's reservation, tokens: {@link OutputMeter.fits} says whether a chunk stays within it;
   *   raised by each top-up ({@link OutputMeter.raise}).
   * @param count the model's tokenizer ({@link tokenizerFor}); undefined: the estimate.
   */
  constructor(
    public limit: number,
    private readonly count: Count | undefined,
  ) {}

  /** Raises the limit by `tokens` (a top-up of the call's reservation was granted). */
  raise(tokens: number): void {
    this.limit += tokens;
  }

  /** Whether the output so far plus `text` stays within the limit; remembers `text` for {@link commit}. */
  fits(text: string): boolean {
    if (text === "") {
      this.pendingTokens = this.tokens;
      this.pendingBytes = this.bytes;
      this.pendingTextChunks = this.textChunks;
      return true;
    }
    const bytes = this.bytes + Buffer.byteLength(text);
    const textChunks = this.textChunks + 1;
    const tokens =
      this.count === undefined ? Math.max(textChunks, Math.ceil(bytes / 4)) : this.tokens + this.count(text);
    this.pendingTokens = tokens;
    this.pendingBytes = bytes;
    this.pendingTextChunks = textChunks;
    return tokens <= this.limit;
  }

  /** Counts the text last given to {@link fits} (it was relayed). */
  commit(): void {
    this.tokens = this.pendingTokens;
    this.bytes = this.pendingBytes;
    this.textChunks = this.pendingTextChunks;
  }
}
