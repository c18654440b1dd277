/**
 * A stream that passes its reservation takes more from the budgets while they allow, and is cut only when they
 * cannot (issue 28, "Caps without silent truncation"). Two gateway instances share their limits through the
 * machine's Redis; the upstream ignores caps and streams more than the call reserved (a deployment whose
 * `model_info.max_output_tokens` is 50, so an uncapped call reserves 50 output tokens and nothing is added to
 * its body).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../../../../../services/gateway/src/limits/index.js";
import type { CallResult } from "../../../../../services/gateway/src/pipeline/types.js";
import { systemClock } from "../../../../../services/gateway/src/time/clock.js";
import {
  type MisbehavingUpstream,
  startMisbehavingUpstream,
} from "../../../../fixtures/misbehaving-upstream.js";
import { openLimits } from "../../../../helpers/limits.js";
import { deleteKeys, uniquePrefix, waitFor } from "../../../../helpers/redis.js";
import { keySubject } from "../../limits/subjects.js";
import { type ChatHarness, rowsRecorder, startChatHarness } from "./harness.js";

/** USD per token, input and output. */
const PRICE = 0.0001;
const MAX_OUTPUT = 50;
const prefix = uniquePrefix("stream-top-up");

let upstream: MisbehavingUpstream;
const limits: Limits[] = [];
const open: ChatHarness[] = [];

beforeAll(async () => {
  upstream = await startMisbehavingUpstream();
  // Two gateway instances: their own admitters, one Redis.
  limits.push(await openLimits(systemClock, prefix), await openLimits(systemClock, prefix));
});
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
  for (const l of limits) await l.close();
  await deleteKeys(prefix);
  await upstream.close();
});

/** Two instances (one per `limits`) serving one key with `maxBudget` USD, and the spend rows of both. */
async function instances(maxBudget: number) {
  const subject = keySubject({ maxBudget, alias: "top-up" });
  const spend = rowsRecorder();
  const results: CallResult[] = [];
  const modelList = [
    "model_list:",
    "  - model_name: general",
    "    litellm_params:",
    "      model: openai/fake-model",
    `      api_base: ${upstream.url}`,
    `      input_cost_per_token: ${PRICE}`,
    `      output_cost_per_token: ${PRICE}`,
    "    model_info:",
    `      max_output_tokens: ${MAX_OUTPUT}`,
  ].join("\n");
  const pair = await Promise.all(
    limits.map((l) =>
      startChatHarness({
        upstreamUrl: upstream.url,
        modelList,
        subjects: [subject],
        admitter: l.admitter,
        spend,
        observers: [{ onCallFinished: (_call, result) => results.push(result) }],
      }),
    ),
  );
  open.push(...pair);
  return { pair, spend, results };
}

const ask = { model: "general", messages: [{ role: "user", content: "Write on." }], stream: true };

interface Chunk {
  choices?: Array<{ delta?: { content?: string }; finish_reason?: string | null }>;
}

/** The `data:` payloads of an SSE body, in order. */
const payloads = (text: string) =>
  text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice("data: ".length));

/** What a stream's client got: the words relayed, the finish reasons, whether it ended with [DONE]. */
function read(text: string) {
  const events = payloads(text);
  const chunks = events.flatMap((p) => (p === "[DONE]" ? [] : [JSON.parse(p) as Chunk]));
  const content = chunks
    .flatMap((c) => c.choices?.map((choice) => choice.delta?.content ?? "") ?? [])
    .join("");
  return {
    words: content.split("word").length - 1,
    finish: chunks.flatMap((c) => c.choices?.map((choice) => choice.finish_reason).filter(Boolean) ?? []),
    done: events.at(-1) === "[DONE]",
  };
}

describe("a stream past its reservation", () => {
  it("completes when the budget has room: 300 tokens for a call that reserved 50, on either instance", async () => {
    upstream.behave({ kind: "long", tokens: 300, perChunk: 1, usage: true });
    const { pair, spend } = await instances(1);
    for (const h of pair) {
      const res = await h.chat(ask);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-gateway-output-cap")).toBeNull();
      const got = read(await res.text());
      expect(got.words).toBe(300);
      expect(got.finish).not.toContain("length");
      expect(got.done).toBe(true);
    }
    await waitFor("rows", () => spend.rows.length === 2);
    // Booked at the upstream's usage: 10 prompt tokens, 300 completion tokens.
    for (const row of spend.rows) {
      expect(row.completionTokens).toBe(300);
      expect(row.spend).toBeCloseTo(310 * PRICE, 9);
    }
  });

  it("is cut when the budget cannot pay for more, having taken what it could, and books within the budget", async () => {
    upstream.behave({ kind: "long", tokens: 2_000, perChunk: 1, usage: true });
    // A call reserves about $0.015 (its prompt bound plus 50 output tokens); the budget pays for ~300 tokens.
    const budget = 0.03;
    const { pair, spend } = await instances(budget);
    const res = await pair[1]!.chat(ask);
    expect(res.status).toBe(200);
    const got = read(await res.text());
    expect(got.finish).toEqual(["length"]);
    expect(got.done).toBe(true);
    expect(got.words).toBeGreaterThan(MAX_OUTPUT * 2);
    expect(got.words).toBeLessThan(2_000);
    await waitFor("row", () => spend.rows.length === 1);
    // Booked by the meter's count of what was relayed (a quarter of the bytes here: it errs high, never low).
    expect(spend.rows[0]!.completionTokens).toBe(Math.ceil((got.words * " word".length) / 4));
    expect(spend.rows[0]!.spend).toBeLessThanOrEqual(budget + 1e-9);
    // What is left is less than one more output token: the stream took what the budget could pay.
    expect(budget - spend.rows[0]!.spend).toBeLessThan(MAX_OUTPUT * PRICE);
  });

  it("concurrent streams on one budget over two instances never book above it", async () => {
    upstream.behave({ kind: "long", tokens: 400, perChunk: 2, usage: true });
    const budget = 0.1;
    const { pair, spend, results } = await instances(budget);
    const streams = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await pair[i % 2]!.chat(ask);
        return { status: res.status, got: res.status === 200 ? read(await res.text()) : undefined };
      }),
    );
    await waitFor("every call observed", () => results.length === 12);
    const booked = spend.rows.reduce((sum, row) => sum + row.spend, 0);
    console.log(
      `12 streams of 400 tokens (50 reserved each) on a $${budget} budget: booked $${booked.toFixed(6)}`,
    );
    expect(booked).toBeLessThanOrEqual(budget + 1e-9);
    const served = streams.filter((s) => s.status === 200);
    expect(served.length).toBeGreaterThan(0);
    // Not vacuous: some stream went past its reservation on a top-up, and the budget stopped the rest.
    expect(served.some((s) => s.got!.words > MAX_OUTPUT)).toBe(true);
    expect(streams.some((s) => s.status === 429 || s.got?.finish.includes("length"))).toBe(true);
  });
});
