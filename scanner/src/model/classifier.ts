/**
 * The prompt-injection classifier: a Hugging Face text-classification model run by transformers.js on
 * onnxruntime-node (CPU, fp32), loaded from a local folder only (`env.allowRemoteModels = false`; the
 * download is ours, see download.ts).
 *
 * transformers.js's pipeline truncates at the tokenizer's `model_max_length`, so an injection past the
 * first 512 tokens would never be seen. Instead the whole text is tokenized once, cut into overlapping
 * windows (windows.ts), each window wrapped in the model's special tokens, and the score is the highest
 * P(INJECTION) over all windows.
 */
import {
  AutoModelForSequenceClassification,
  AutoTokenizer,
  env,
  type PreTrainedModel,
  type PreTrainedTokenizer,
  Tensor,
} from "@huggingface/transformers";
import { tokenWindows } from "./windows.js";

/** The classification of one text. */
export interface Classification {
  /** Highest P(INJECTION) over the windows, 0..1. */
  score: number;
  /** Number of windows the text was scanned in (1 for a text within one window). */
  chunks: number;
}

/** A loaded classifier. */
export interface Classifier {
  /** Model id, e.g. `protectai/deberta-v3-base-prompt-injection-v2`. */
  readonly model: string;
  /** Tokens per window, special tokens included. */
  readonly windowTokens: number;
  /** Tokens shared by consecutive windows. */
  readonly windowOverlap: number;
  /**
   * Scores a whole text, window by window.
   * @throws Error when inference fails (a bug or a broken model file, not a client error)
   */
  classify(text: string): Promise<Classification>;
}

/** How to load a classifier. */
export interface LoadOptions {
  /** Folder holding one folder per model id (the hub layout: `<modelDir>/<model>/config.json`). */
  modelDir: string;
  model: string;
  /** Upper bound for tokens per window; the model's own maximum wins when smaller. Default 512. */
  windowTokens?: number;
  /** Tokens shared by consecutive windows. Default 128. */
  windowOverlap?: number;
  /** Windows per inference call (bounds memory for long texts). Default 8. */
  batchWindows?: number;
}

/** The label the score is read from (matched case-insensitively in `config.id2label`). */
const INJECTION_LABEL = "INJECTION";

/** Special tokens the tokenizer wraps a single text in (e.g. `[CLS]` … `[SEP]`), found by encoding a probe. */
function specialTokens(tokenizer: PreTrainedTokenizer): { prefix: number[]; suffix: number[] } {
  const probe = "hello";
  const bare = tokenizer.encode(probe, { add_special_tokens: false });
  const wrapped = tokenizer.encode(probe, { add_special_tokens: true });
  for (let at = 0; at + bare.length <= wrapped.length; at++) {
    if (bare.every((id, i) => wrapped[at + i] === id)) {
      return { prefix: wrapped.slice(0, at), suffix: wrapped.slice(at + bare.length) };
    }
  }
  throw new Error("cannot tell the tokenizer's special tokens apart from the text's own tokens");
}

function finiteLimit(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : Number.POSITIVE_INFINITY;
}

function injectionIndex(id2label: Record<string, string> | undefined, model: string): number {
  const entry = Object.entries(id2label ?? {}).find(([, label]) => label.toUpperCase() === INJECTION_LABEL);
  if (entry === undefined) {
    throw new Error(
      `model ${model} has no ${INJECTION_LABEL} label in config.json id2label (has: ${JSON.stringify(id2label ?? {})})`,
    );
  }
  return Number(entry[0]);
}

/** P(label `index`) from one row of logits (softmax). */
function probability(logits: ArrayLike<number>, index: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]!);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  return Math.exp(logits[index]! - max) / sum;
}

/**
 * Loads the tokenizer and ONNX model of `options.model` from `options.modelDir` (no network). Sets
 * transformers.js's process-wide `env` (local files only, `localModelPath = modelDir`): load one model at a
 * time.
 * @throws Error when a file is missing or malformed, or the model has no INJECTION label
 */
export async function loadClassifier(options: LoadOptions): Promise<Classifier> {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useFSCache = false;
  env.localModelPath = options.modelDir.endsWith("/") ? options.modelDir : `${options.modelDir}/`;

  const tokenizer = await AutoTokenizer.from_pretrained(options.model);
  const model: PreTrainedModel = await AutoModelForSequenceClassification.from_pretrained(options.model, {
    device: "cpu",
    dtype: "fp32",
  });
  const config = model.config as unknown as {
    id2label?: Record<string, string>;
    max_position_embeddings?: number;
  };
  const target = injectionIndex(config.id2label, options.model);
  const { prefix, suffix } = specialTokens(tokenizer);
  const windowTokens = Math.min(
    options.windowTokens ?? 512,
    finiteLimit(tokenizer.model_max_length),
    finiteLimit(config.max_position_embeddings),
  );
  const contentTokens = windowTokens - prefix.length - suffix.length;
  const windowOverlap = Math.min(options.windowOverlap ?? 128, Math.floor(contentTokens / 2));
  const batchWindows = options.batchWindows ?? 8;
  const padId = tokenizer.pad_token_id ?? 0;

  /** P(INJECTION) of each window in one inference call. */
  const scoreBatch = async (windows: number[][]): Promise<number[]> => {
    const width = Math.max(...windows.map((w) => w.length));
    const ids = new BigInt64Array(windows.length * width).fill(BigInt(padId));
    const mask = new BigInt64Array(windows.length * width);
    windows.forEach((window, row) => {
      window.forEach((id, col) => {
        ids[row * width + col] = BigInt(id);
        mask[row * width + col] = 1n;
      });
    });
    const { logits } = (await model({
      input_ids: new Tensor("int64", ids, [windows.length, width]),
      attention_mask: new Tensor("int64", mask, [windows.length, width]),
    })) as { logits: Tensor };
    const labels = logits.dims[1]!;
    const data = logits.data as Float32Array;
    return windows.map((_, row) => probability(data.subarray(row * labels, (row + 1) * labels), target));
  };

  return {
    model: options.model,
    windowTokens,
    windowOverlap,
    async classify(text) {
      const content = tokenizer.encode(text, { add_special_tokens: false });
      const windows = tokenWindows(content.length, contentTokens, windowOverlap).map(({ start, end }) => [
        ...prefix,
        ...content.slice(start, end),
        ...suffix,
      ]);
      let score = 0;
      for (let i = 0; i < windows.length; i += batchWindows) {
        for (const p of await scoreBatch(windows.slice(i, i + batchWindows))) score = Math.max(score, p);
      }
      return { score, chunks: windows.length };
    },
  };
}
