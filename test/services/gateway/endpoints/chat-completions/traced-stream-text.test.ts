/**
 * A stream whose text an observer records (tracing: `wantsOutput`, `call.output`): the text is the one the
 * client got, after the output guard, and collecting it parses no chunk the relay already read: each chunk is
 * parsed whole at most once on its way (only a payload the guard rewrote is parsed again, as the new string it is).
 * Counted by spying on `JSON.parse` while the gateway relays, without a guard and with a guard that holds the
 * stream and masks a word by rewriting the payloads that carry it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { CallGuard, StreamOutputGuard } from "../../../../../services/gateway/src/guardrails/types.js";
import type { CallContext, CallObserver } from "../../../../../services/gateway/src/pipeline/types.js";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { waitFor } from "../../../../helpers/redis.js";
import { sseData } from "../../../../helpers/sse.js";
import { type ChatHarness, startChatHarness } from "./harness.js";

/** On a request whose message says "mask", holds the stream and releases it with "secret" masked (no parse). */
const guard: CallGuard = {
  checkInput: async () => ({ decisions: [], rewritten: false }),
  checkOutput: async () => ({ decisions: [] }),
  streamOutput(call): StreamOutputGuard | undefined {
    if (!JSON.stringify(call.body.messages).includes("mask")) return undefined;
    const held: string[] = [];
    return {
      onData: (payload) => {
        held.push(payload);
        return "hold";
      },
      onEnd: () => ({ decisions: [], release: held.map((p) => p.replaceAll("secret", "******")) }),
    };
  },
};
const outputs: Array<string | undefined> = [];
const observer: CallObserver = {
  wantsOutput: true,
  onCallFinished: (call: CallContext) => outputs.push(call.output as string | undefined),
};

let upstream: FakeUpstream;
let gw: ChatHarness;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  gw = await startChatHarness({ upstreamUrl: upstream.url, guard, observers: [observer] });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});
afterEach(() => vi.restoreAllMocks());

/**
 * Streams `content` with `JSON.parse` spied on; returns the client's text (the chunks' `delta.content` joined),
 * the text the observer recorded, and how often each chunk was parsed whole, by the chunk with any `"usage":null`
 * left out (the relay removes it from what the client gets when the client did not ask for usage).
 */
async function tracedStream(content: string, includeUsage: boolean) {
  outputs.length = 0;
  const parse = vi.spyOn(JSON, "parse");
  const res = await gw.chat({
    model: "general",
    stream: true,
    messages: [{ role: "user", content }],
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  });
  expect(res.status).toBe(200);
  const body = await res.text();
  await waitFor("the observer", () => outputs.length === 1);
  const parses = new Map<string, number>();
  for (const [arg] of parse.mock.calls) {
    if (typeof arg !== "string" || !arg.includes('"chat.completion.chunk"')) continue;
    const chunk = arg.replace(/,"usage":null/, "");
    parses.set(chunk, (parses.get(chunk) ?? 0) + 1);
  }
  parse.mockRestore();
  const chunks = sseData(body)
    .filter((data) => data !== "[DONE]")
    .map((data) => JSON.parse(data) as { choices: Array<{ delta?: { content?: string } }> });
  const client = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
  return { client, traced: outputs[0], parses, chunks: chunks.length };
}

describe("a traced stream's text", () => {
  for (const includeUsage of [false, true]) {
    it(`without a guard: the client's text, each chunk parsed at most once (include_usage ${includeUsage})`, async () => {
      const { client, traced, parses, chunks } = await tracedStream("tell me a story", includeUsage);
      expect(client).toBe("You said: tell me a story");
      expect(traced).toBe(client);
      expect(chunks).toBeGreaterThan(5);
      for (const [chunk, count] of parses) expect({ chunk, count }).toEqual({ chunk, count: 1 });
    });

    it(`with a masking guard: the masked text the client got, unchanged chunks parsed at most once (include_usage ${includeUsage})`, async () => {
      const { client, traced, parses } = await tracedStream("mask my secret plan", includeUsage);
      expect(client).toBe("You said: mask my ****** plan");
      expect(traced).toBe(client);
      for (const [chunk, count] of parses) expect({ chunk, count }).toEqual({ chunk, count: 1 });
    });
  }
});
