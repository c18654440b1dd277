/**
 * A native Responses stream (an upstream that serves `/v1/responses` itself) has the chat stream's bounds: an
 * upstream that ignores `max_output_tokens` is cut at the call's reservation (`response.incomplete`, reason
 * `max_output_tokens`; the booked spend stays within it), one that stalls after its first event is ended after
 * the deployment's `stream_timeout` (an `error` event with code `timeout`, then `response.failed`), and the
 * stream output guard reads and may rewrite its text.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallGuard } from "../../../../../services/gateway/src/guardrails/types.js";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../../fixtures/openai-responses.js";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";
import { sseData } from "../../../../helpers/sse.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let upstream: FakeResponsesUpstream;
let gw: ChatHarness;
let guarded: ChatHarness;
const spend = rowsRecorder();
const PRICE = 0.00001;

const extraParams =
  '      stream_timeout: 0.3\n    model_info:\n      supported_endpoints: ["/v1/chat/completions", "/v1/responses"]\n';

/**
 * A stream output guard in buffer mode that rewrites every content text to upper case (as the PII guard's mask
 * rewrites held chunks: the payloads it is given, released at the end, in order).
 */
const shouting: CallGuard = {
  checkInput: async () => ({ decisions: [], rewritten: false }),
  checkOutput: async () => ({ decisions: [] }),
  streamOutput: () => {
    const held: string[] = [];
    return {
      onData: (payload) => {
        held.push(payload);
        return "hold";
      },
      onEnd: () => ({
        decisions: [{ guardrail: "shout", hook: "post_call", action: "mask", mode: "enforce", latencyMs: 0 }],
        release: held.map((payload) => {
          const chunk = JSON.parse(payload) as { choices?: Array<{ delta: { content: string } }> };
          for (const choice of chunk.choices ?? []) choice.delta.content = choice.delta.content.toUpperCase();
          return JSON.stringify(chunk);
        }),
      }),
    };
  },
};

beforeAll(async () => {
  upstream = await startFakeResponsesUpstream();
  gw = await startChatHarness({ upstreamUrl: upstream.url, spend, pricePerToken: PRICE, extraParams });
  guarded = await startChatHarness({ upstreamUrl: upstream.url, guard: shouting, extraParams });
});
afterAll(async () => {
  await gw?.close();
  await guarded?.close();
  await upstream?.close();
});

type Event = Record<string, unknown> & { type: string };

async function stream(body: Record<string, unknown>, on = gw): Promise<{ status: number; events: Event[] }> {
  const response = await fetch(`${on.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "general", stream: true, ...body }),
  });
  const events = sseData(await response.text()).map((data) => JSON.parse(data) as Event);
  return { status: response.status, events };
}

describe("native Responses stream bounds", () => {
  it("cuts an upstream that ignores max_output_tokens at the reservation and books within it", async () => {
    const before = spend.rows.length;
    upstream.misbehaveNextStream({ kind: "long", words: 5000 });
    const { status, events } = await stream({ input: "talk a lot", max_output_tokens: 16 });
    expect(status).toBe(200);
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.length).toBeLessThanOrEqual(16);
    const last = events.at(-1)!;
    expect(last.type).toBe("response.incomplete");
    expect(last).toMatchObject({
      response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } },
    });
    expect(openAISchemaErrors("ResponseStreamEvent", last)).toEqual([]);
    await expect.poll(() => spend.rows.length).toBe(before + 1);
    const row = spend.rows.at(-1)!;
    expect(row.completionTokens).toBeLessThanOrEqual(16);
    expect(row.spend).toBeLessThanOrEqual((row.promptTokens + 16) * PRICE + 1e-12);
  });

  it("ends a stream that stalls after its first event after stream_timeout, with a timeout error event", async () => {
    const before = spend.rows.length;
    upstream.misbehaveNextStream({ kind: "stall" });
    const { status, events } = await stream({ input: "then silence" });
    expect(status).toBe(200);
    expect(events[0]?.type).toBe("response.created");
    const error = events.find((e) => e.type === "error");
    expect(error).toMatchObject({ code: "timeout" });
    expect(String(error?.message)).toContain("stream_timeout");
    expect(events.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed" } });
    for (const event of events.slice(1)) expect(openAISchemaErrors("ResponseStreamEvent", event)).toEqual([]);
    await expect.poll(() => spend.rows.length).toBe(before + 1);
    expect(spend.rows.at(-1)?.status).toBe(504);
  });

  it("runs the stream output guard: its rewrite reaches the deltas and every event that repeats the text", async () => {
    const { status, events } = await stream({ input: "guard me" }, guarded);
    expect(status).toBe(200);
    const text = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    expect(text).toBe("YOU SAID: GUARD ME");
    expect(events.find((e) => e.type === "response.output_text.done")).toMatchObject({
      text: "YOU SAID: GUARD ME",
    });
    const completed = events.at(-1) as Event & {
      response: { output: Array<{ content: Array<{ text: string }> }> };
    };
    expect(completed.type).toBe("response.completed");
    expect(completed.response.output[0]?.content[0]?.text).toBe("YOU SAID: GUARD ME");
    expect(JSON.stringify(events)).not.toContain("You said");
    for (const event of events) expect(openAISchemaErrors("ResponseStreamEvent", event)).toEqual([]);
  });
});
