/**
 * Streams that cannot overspend and upstream failures told honestly (issue 20, defects 1, 4 and 5), against a
 * misbehaving upstream: one that ignores `max_tokens`, one that sends no usage, a 200 HTML answer to a stream,
 * a first event that is not JSON, a stream that stalls and one that never ends.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../../../../../services/gateway/src/pipeline/types.js";
import {
  type MisbehavingUpstream,
  startMisbehavingUpstream,
} from "../../../../fixtures/misbehaving-upstream.js";
import { waitFor } from "../../../../helpers/redis.js";
import { keySubject } from "../../limits/subjects.js";
import { type ChatHarness, type ChatHarnessOptions, rowsRecorder, startChatHarness } from "./harness.js";

let upstream: MisbehavingUpstream;
const open: ChatHarness[] = [];

beforeAll(async () => {
  upstream = await startMisbehavingUpstream();
});
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
  await upstream.close();
});

/** A harness whose key has `maxBudget` USD, its finished calls' results and spend rows. */
async function harness(maxBudget: number, options: Partial<ChatHarnessOptions> = {}) {
  const results: CallResult[] = [];
  const spend = rowsRecorder();
  const h = await startChatHarness({
    upstreamUrl: upstream.url,
    subjects: [keySubject({ maxBudget, alias: "streams" })],
    spend,
    observers: [{ onCallFinished: (_call, result) => results.push(result) }],
    ...options,
  });
  open.push(h);
  return { h, results, spend };
}

const ask = (extra: Record<string, unknown> = {}) => ({
  model: "general",
  messages: [{ role: "user", content: "Write forever." }],
  stream: true,
  ...extra,
});

interface Chunk {
  choices?: Array<{ delta?: { content?: string }; finish_reason?: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  error?: { message: string; type: string; code: string };
}

/** The `data:` payloads of an SSE body, in order. */
function payloads(text: string): string[] {
  return text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice("data: ".length));
}

const jsonChunks = (text: string) =>
  payloads(text).flatMap((p) => (p === "[DONE]" ? [] : [JSON.parse(p) as Chunk]));

describe("a stream is bounded by its reservation", () => {
  it("20 concurrent streams with max_tokens 5 against an upstream streaming 20,000 tokens stay within a $1 budget", async () => {
    upstream.behave({ kind: "long", tokens: 20_000, perChunk: 1, usage: true });
    // $0.002 a token: one uncut answer would cost $40, the reservation of one call is about $0.05.
    const { h, results } = await harness(1, { pricePerToken: 0.002 });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await h.chat(ask({ max_tokens: 5 }));
        await res.text();
        return res.status;
      }),
    );
    await waitFor("every call observed", () => results.length === 20);
    const spent = results.reduce((sum, r) => sum + r.cost, 0);
    const oneReservation = (Math.ceil(JSON.stringify(ask({ max_tokens: 5 })).length / 4) + 5) * 0.002;
    console.log(`20 streams, max_tokens 5, upstream ignoring it: spent $${spent.toFixed(4)} of a $1 budget`);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(1 + oneReservation);
  });

  it("cuts the stream with finish_reason length, then usage (when asked), then [DONE], and books what it relayed", async () => {
    upstream.behave({ kind: "long", tokens: 20_000, perChunk: 1, usage: true });
    const { h, spend } = await harness(100, { upstreamModel: "openai/gpt-4o-mini" });
    const res = await h.chat(ask({ max_tokens: 5, stream_options: { include_usage: true } }));
    const text = await res.text();
    const events = payloads(text);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = jsonChunks(text);
    const content = chunks
      .flatMap((c) => c.choices?.map((choice) => choice.delta?.content ?? "") ?? [])
      .join("");
    expect(content.split("word").length - 1).toBe(5);
    const last = chunks.at(-2);
    expect(last?.choices?.[0]?.finish_reason).toBe("length");
    const usage = chunks.at(-1)?.usage;
    expect(usage?.completion_tokens).toBe(5);
    await waitFor("row", () => spend.rows.length === 1);
    expect(spend.rows[0]?.completionTokens).toBe(5);
  });

  it("counts OpenAI-family output with the model's tokenizer", async () => {
    upstream.behave({ kind: "long", tokens: 40, perChunk: 4, usage: false });
    const { h, spend } = await harness(100, { upstreamModel: "openai/gpt-4o-mini" });
    const text = await (await h.chat(ask({ max_tokens: 30 }))).text();
    const chunks = jsonChunks(text);
    // Chunks of four " word" tokens: seven fit in 30 tokens, the eighth would pass it.
    expect(chunks.filter((c) => c.choices?.[0]?.delta?.content).length).toBe(7);
    expect(chunks.at(-1)?.choices?.[0]?.finish_reason).toBe("length");
    await waitFor("row", () => spend.rows.length === 1);
    expect(spend.rows[0]?.completionTokens).toBe(28);
  });

  it("books a stream without usage by its token count, not by its chunks", async () => {
    // 20,000 words in 2,000 chunks, no usage chunk; the reservation (max_tokens) covers all of it.
    upstream.behave({ kind: "long", tokens: 20_000, perChunk: 10, usage: false });
    const { h, spend } = await harness(100);
    const res = await h.chat(ask({ max_tokens: 30_000 }));
    const text = await res.text();
    expect(payloads(text).at(-1)).toBe("[DONE]");
    await waitFor("row", () => spend.rows.length === 1);
    expect(spend.rows[0]?.completionTokens).toBeGreaterThanOrEqual(20_000);
  });
});

describe("honest upstream failures on streams", () => {
  for (const [name, behaviour] of [
    ["a 200 HTML page", { kind: "html" }],
    ["an HTML page labelled text/event-stream", { kind: "html", contentType: "text/event-stream" }],
    ["a first event that is not JSON", { kind: "garbage-event" }],
  ] as const) {
    it(`${name} becomes the 502 a non-streamed call gets, booked at zero`, async () => {
      upstream.behave(behaviour);
      const { h, results, spend } = await harness(100);
      const streamed = await h.chat(ask());
      const streamedBody = (await streamed.json()) as Chunk;
      const plain = await h.chat(ask({ stream: false }));
      const plainBody = (await plain.json()) as Chunk;
      expect(streamed.status).toBe(502);
      expect(streamed.headers.get("content-type")).toMatch(/^application\/json/);
      expect(streamedBody.error?.type).toBe("upstream_error");
      if (behaviour.kind === "html" && behaviour.contentType === undefined) {
        expect(plain.status).toBe(502);
        expect(streamedBody.error?.type).toBe(plainBody.error?.type);
      }
      await waitFor("calls observed", () => results.length === 2);
      expect(results[0]?.cost).toBe(0);
      // The failed stream is logged as a failure: nothing billed, its reason given.
      expect(spend.rows.filter((row) => row.stream)).toEqual([
        expect.objectContaining({ spend: 0, totalTokens: 0, status: 502, reason: "upstream_error" }),
      ]);
    });
  }

  it("ends a stream that stalls past stream_timeout with an SSE error event and books what was relayed", async () => {
    upstream.behave({ kind: "stall" });
    const { h, spend } = await harness(100, {
      extraParams: "      stream_timeout: 0.3\n",
      upstreamModel: "openai/gpt-4o-mini",
    });
    const started = performance.now();
    const res = await h.chat(ask());
    const text = await res.text();
    expect(performance.now() - started).toBeLessThan(5000);
    const chunks = jsonChunks(text);
    expect(chunks[0]?.choices?.[0]?.delta?.content).toBe("Hello");
    expect(chunks.at(-1)?.error?.type).toBe("timeout");
    expect(chunks.at(-1)?.error?.message).toMatch(/0\.3 s/);
    await waitFor("row", () => spend.rows.length === 1);
    expect(spend.rows[0]?.completionTokens).toBe(1);
    expect(spend.rows[0]?.status).toBe(504);
  });

  it("ends a stream that runs past the maximum stream duration with an SSE error event", async () => {
    upstream.behave({ kind: "endless", everyMs: 20 });
    const { h, spend } = await harness(100, {
      maxStreamDurationMs: 400,
      upstreamModel: "openai/gpt-4o-mini",
    });
    const res = await h.chat(ask());
    const text = await res.text();
    const chunks = jsonChunks(text);
    const relayed = chunks.filter((c) => c.choices?.[0]?.delta?.content).length;
    expect(relayed).toBeGreaterThan(2);
    expect(chunks.at(-1)?.error?.type).toBe("timeout");
    expect(chunks.at(-1)?.error?.message).toMatch(/maximum stream duration/);
    await waitFor("row", () => spend.rows.length === 1);
    expect(spend.rows[0]?.completionTokens).toBe(relayed);
  });
});
