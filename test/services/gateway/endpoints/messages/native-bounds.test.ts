/**
 * A native Messages stream (an `anthropic/` deployment, Anthropic's contract fake) has the chat stream's bounds:
 * an upstream that ignores `max_tokens` is cut at the call's reservation (ended as Anthropic ends a stream at
 * `max_tokens`; the booked spend stays within it), and one that stalls after `message_start` is ended after the
 * deployment's `stream_timeout` with Anthropic's `timeout_error` event; a stream output guard that blocks
 * replaces the held answer by Anthropic's error event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../../../../services/gateway/src/errors/gateway-error.js";
import type { CallGuard } from "../../../../../services/gateway/src/guardrails/types.js";
import { type FakeAnthropic, startFakeAnthropic } from "../../../../fixtures/anthropic-messages.js";
import { sseData } from "../../../../helpers/sse.js";
import {
  type ChatHarness,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../chat-completions/harness.js";

let upstream: FakeAnthropic;
let gw: ChatHarness;
let guarded: ChatHarness;
const spend = rowsRecorder();
const PRICE = 0.00001;

/** A stream output guard in buffer mode that holds every event and blocks at the end, as a PII block does. */
const blocking: CallGuard = {
  checkInput: async () => ({ decisions: [], rewritten: false }),
  checkOutput: async () => ({ decisions: [] }),
  streamOutput: () => ({
    onData: () => "hold",
    onEnd: () => ({
      decisions: [{ guardrail: "test", hook: "post_call", action: "block", mode: "enforce", latencyMs: 0 }],
      block: new GatewayError(400, "The answer was blocked by the output guardrail.", {
        type: "guardrail_violation",
      }),
    }),
  }),
};

beforeAll(async () => {
  upstream = await startFakeAnthropic({ apiKey: "sk-ant-upstream" });
  const deployment = {
    upstreamUrl: upstream.url,
    upstreamModel: "anthropic/claude-haiku-4-5",
    pricePerToken: PRICE,
    extraParams: "      api_key: sk-ant-upstream\n      stream_timeout: 0.3\n",
  };
  gw = await startChatHarness({ ...deployment, spend });
  guarded = await startChatHarness({ ...deployment, guard: blocking });
});
afterAll(async () => {
  await gw?.close();
  await guarded?.close();
  await upstream?.close();
});

type Event = Record<string, unknown> & { type: string };

async function stream(
  maxTokens: number,
  text: string,
  on = gw,
): Promise<{ status: number; events: Event[] }> {
  const response = await fetch(`${on.url}/v1/messages`, {
    method: "POST",
    headers: {
      "x-api-key": VIRTUAL_KEY,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify({
      model: "general",
      stream: true,
      max_tokens: maxTokens,
      messages: [{ role: "user", content: text }],
    }),
  });
  const events = sseData(await response.text()).map((data) => JSON.parse(data) as Event);
  return { status: response.status, events };
}

describe("native Messages stream bounds", () => {
  it("cuts an upstream that ignores max_tokens at the reservation and books within it", async () => {
    const before = spend.rows.length;
    upstream.misbehaveNextStream({ kind: "long", words: 5000 });
    const { status, events } = await stream(16, "talk a lot");
    expect(status).toBe(200);
    const deltas = events.filter((e) => e.type === "content_block_delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.length).toBeLessThanOrEqual(16);
    expect(events.slice(-3).map((e) => e.type)).toEqual([
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: "max_tokens" } });
    await expect.poll(() => spend.rows.length).toBe(before + 1);
    const row = spend.rows.at(-1)!;
    expect(row.completionTokens).toBeLessThanOrEqual(16);
    // The closing message_delta reports the output booked.
    expect(events.at(-2)).toMatchObject({ usage: { output_tokens: row.completionTokens } });
    expect(row.spend).toBeLessThanOrEqual((row.promptTokens + 16) * PRICE + 1e-12);
  });

  it("ends a stream that stalls after message_start after stream_timeout, with a timeout_error event", async () => {
    const before = spend.rows.length;
    upstream.misbehaveNextStream({ kind: "stall" });
    const { status, events } = await stream(64, "then silence");
    expect(status).toBe(200);
    expect(events[0]?.type).toBe("message_start");
    const last = events.at(-1);
    expect(last).toMatchObject({ type: "error", error: { type: "timeout_error" } });
    expect(JSON.stringify(last)).toContain("stream_timeout");
    await expect.poll(() => spend.rows.length).toBe(before + 1);
    expect(spend.rows.at(-1)?.status).toBe(504);
  });

  it("runs the stream output guard: a block replaces the held answer by Anthropic's error event", async () => {
    const { status, events } = await stream(64, "block me", guarded);
    expect(status).toBe(200);
    expect(events).toEqual([
      {
        type: "error",
        error: { type: "invalid_request_error", message: "The answer was blocked by the output guardrail." },
      },
    ]);
  });
});
