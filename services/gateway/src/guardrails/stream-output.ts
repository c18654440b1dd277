/**
 * The PII guardrail on a streamed answer (`chat.completion.chunk` events, or a legacy completion's
 * `text_completion` chunks, whose choices carry `text` where chat's carry `delta.content`). The text of each
 * choice is the concatenation of its pieces; the analyzer runs once, on the whole text, when the upstream ends
 * (a PII value split across chunks is still found).
 *
 * - `stream_output: buffer`: every payload is held; at the end a block replaces the answer by an error event
 *   (none of the answer was sent), a mask puts each choice's masked text in its first content chunk and empties
 *   its later ones, and allow releases the payloads unchanged.
 * - `stream_output: report`: payloads pass at once; at the end the verdict is recorded as a monitor decision
 *   (the text already left), as it is in monitor mode whatever `stream_output` says. Tool-call argument deltas are not inspected on streams.
 */

import type { PiiAnalyzer } from "./pii/analyzer.js";
import { maskText } from "./pii/mask.js";
import { inspectPii } from "./pii/pii-guard.js";
import type { GuardMode, PiiPolicy } from "./policy/schema.js";
import { firstRefusal } from "./refusals.js";
import type { GuardDecision, StreamOutputGuard } from "./types.js";

interface Choice {
  index?: number;
  text?: unknown;
  delta?: { content?: unknown };
}

interface Chunk {
  choices?: Choice[];
}

/** Where a choice's text piece sits: chat's `delta` (`content`), or the choice itself (`text`). */
function piece(choice: Choice): { holder: Record<string, unknown>; key: "content" | "text" } | undefined {
  if (typeof choice.delta?.content === "string") return { holder: choice.delta, key: "content" };
  if (typeof choice.text === "string") return { holder: choice as Record<string, unknown>, key: "text" };
  return undefined;
}

/** A payload and, when it is a chunk with content, its parsed form. */
interface Held {
  raw: string;
  chunk?: Chunk;
}

/** Options of {@link createStreamOutputGuard}. */
export interface StreamOutputOptions {
  policy: PiiPolicy;
  analyzer: PiiAnalyzer;
  /** The effective mode for this call (the key's override applied); never "off". */
  mode: Exclude<GuardMode, "off">;
  /** Called with the decision when it is made (metrics). */
  record(decision: GuardDecision): void;
}

/** Creates the per-call stream transformer. */
export function createStreamOutputGuard(options: StreamOutputOptions): StreamOutputGuard {
  const { policy, analyzer, record } = options;
  // Monitor mode never holds the stream: it changes nothing, timing included.
  const buffer = policy.streamOutput === "buffer" && options.mode === "enforce";
  const mode = buffer ? "enforce" : "monitor";
  const held: Held[] = [];
  /** choice index → content pieces. */
  const pieces = new Map<number, string[]>();

  function collect(raw: string): Held {
    if (!raw.includes('"content"') && !raw.includes('"text"')) return { raw };
    let chunk: Chunk;
    try {
      chunk = JSON.parse(raw) as Chunk;
    } catch {
      return { raw };
    }
    let hasContent = false;
    for (const choice of chunk.choices ?? []) {
      const at = piece(choice);
      const content = at?.holder[at.key];
      if (typeof content !== "string" || content === "") continue;
      const index = choice.index ?? 0;
      const list = pieces.get(index) ?? [];
      list.push(content);
      pieces.set(index, list);
      hasContent = true;
    }
    return hasContent ? { raw, chunk } : { raw };
  }

  return {
    onData(payload) {
      const item = collect(payload);
      if (!buffer) return [payload];
      held.push(item);
      return "hold";
    },
    async onEnd() {
      const indexes = [...pieces.keys()];
      const texts = indexes.map((i) => (pieces.get(i) ?? []).join(""));
      const verdict = await inspectPii(policy, analyzer, texts, "post_call", mode);
      record(verdict.decision);
      const decisions = [verdict.decision];
      if (!buffer) return { decisions, release: [] };
      const block = firstRefusal([verdict.refusal], decisions);
      if (block !== undefined) return { decisions, block };
      const found = verdict.findings;
      if (verdict.decision.action === "mask" && found !== undefined) {
        const masked = new Map(
          indexes.map((index, k) => [index, maskText(texts[k] ?? "", found.spans[k] ?? [])]),
        );
        return { decisions, release: rewrite(held, masked) };
      }
      return { decisions, release: held.map((h) => h.raw) };
    },
  };
}

/** The held payloads with each choice's text (`delta.content` or `text`) replaced by its masked text (first chunk) or "" (later ones). */
function rewrite(held: readonly Held[], masked: Map<number, string>): string[] {
  const placed = new Set<number>();
  return held.map((h) => {
    if (h.chunk === undefined) return h.raw;
    for (const choice of h.chunk.choices ?? []) {
      const at = piece(choice);
      const content = at?.holder[at.key];
      if (at === undefined || typeof content !== "string" || content === "") continue;
      const index = choice.index ?? 0;
      at.holder[at.key] = placed.has(index) ? "" : (masked.get(index) ?? content);
      placed.add(index);
    }
    return JSON.stringify(h.chunk);
  });
}
