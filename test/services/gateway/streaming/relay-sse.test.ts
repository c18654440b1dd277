import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StreamOutputGuard } from "../../../../services/gateway/src/guardrails/types.js";
import { OutputMeter } from "../../../../services/gateway/src/streaming/output-meter.js";
import {
  type RelayOptions,
  type RelayOutcome,
  relaySse,
} from "../../../../services/gateway/src/streaming/relay-sse.js";
import { StreamText } from "../../../../services/gateway/src/streaming/stream-text.js";
import { sseData } from "../../../helpers/sse.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/**
 * Relays `pieces` (the upstream's body, one yield each) through a real http.ServerResponse and returns the body
 * the client received and the relay's outcome.
 */
async function relayPieces(
  pieces: Buffer[],
  options: RelayOptions,
): Promise<{ body: string; outcome: RelayOutcome }> {
  // Settles with relaySse's own promise, so the outcome is awaited, not read before the relay has returned it.
  let relayed: ((outcome: Promise<RelayOutcome>) => void) | undefined;
  const outcome = new Promise<RelayOutcome>((resolve) => {
    relayed = resolve;
  });
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    async function* upstream() {
      yield* pieces;
    }
    relayed?.(relaySse(upstream(), res, options));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
  return { body, outcome: await outcome };
}

/**
 * Relays `events` (each one SSE `data:` payload, sent as its own upstream piece) and returns the payloads the
 * client received and the relay's outcome.
 */
async function relay(
  events: string[],
  options: RelayOptions,
): Promise<{ received: string[]; outcome: RelayOutcome }> {
  const { body, outcome } = await relayPieces(
    events.map((data) => Buffer.from(`data: ${data}\n\n`)),
    options,
  );
  return { received: sseData(body), outcome };
}

const chunk = (content: string, usage: string) =>
  `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}],${usage}}`;

describe("relaySse when the gateway asked for usage on the client's behalf", () => {
  it("removes the upstream's usage: null (compact or spaced, any position) and drops the usage chunk", async () => {
    const usageChunk = `{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`;
    const { received, outcome } = await relay(
      [
        chunk("Hel", `"usage":null`),
        chunk("lo", `"usage": null`),
        `{"usage":null,"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{}}]}`,
        usageChunk,
        "[DONE]",
      ],
      { stripUsage: true },
    );
    expect(received).toHaveLength(4);
    for (const data of received.slice(0, 3)) expect(Object.keys(JSON.parse(data))).not.toContain("usage");
    expect(received.map((d) => (d === "[DONE]" ? d : JSON.parse(d).choices[0].delta.content))).toEqual([
      "Hel",
      "lo",
      undefined,
      "[DONE]",
    ]);
    expect(outcome.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(outcome.usage?.breakdown).toMatchObject({ input: 3, cache_read: 0, output: 2 });
  });

  it("leaves a model's text that spells a usage member untouched", async () => {
    const text = `config: {"a":1,"usage":null,"b":2}`;
    const { received } = await relay([chunk(text, `"usage":null`), "[DONE]"], { stripUsage: true });
    const first = JSON.parse(received[0]!);
    expect(first.choices[0].delta.content).toBe(text);
    expect(Object.keys(first)).not.toContain("usage");
  });

  it("keeps usage on a chunk that also carries choices, without the usage member", async () => {
    const { received, outcome } = await relay(
      [chunk("end", `"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`), "[DONE]"],
      { stripUsage: true },
    );
    expect(JSON.parse(received[0]!)).not.toHaveProperty("usage");
    expect(JSON.parse(received[0]!).choices[0].delta.content).toBe("end");
    expect(outcome.usage?.total_tokens).toBe(2);
  });
});

describe("relaySse when the client asked for usage", () => {
  it("passes every event through unchanged", async () => {
    const events = [
      chunk("Hi", `"usage":null`),
      `{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
      "[DONE]",
    ];
    const { received } = await relay(events, { stripUsage: false });
    expect(received).toEqual(events);
  });
});

describe("relaySse writes each upstream piece's events in one write", () => {
  const text = (content: string) =>
    `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}]}`;

  it("sends pieces relayed unchanged byte for byte, several events to a piece", async () => {
    const pieces = [
      `data: ${text("Grüße ")}\n\ndata: ${text("😀")}\n\n`,
      `data: ${text("done")}\n\n`,
      "data: [DONE]\n\n",
    ];
    const { body, outcome } = await relayPieces(
      pieces.map((p) => Buffer.from(p)),
      { stripUsage: false },
    );
    expect(body).toBe(pieces.join(""));
    expect(outcome.completed).toBe(true);
  });

  it("re-encodes what is not the gateway's wire form and keeps characters split across pieces whole", async () => {
    const bytes = Buffer.from(`: keep-alive\n\ndata:${text("é😀")}\r\n\r\ndata: [DONE]\n\n`);
    const split = bytes.indexOf(Buffer.from("😀")) + 2; // inside the emoji's four bytes
    const { body } = await relayPieces([bytes.subarray(0, split), bytes.subarray(split)], {
      stripUsage: false,
    });
    // The comment is not relayed and each event goes out as `data: <payload>\n\n`, the text intact.
    expect(body).toBe(`data: ${text("é😀")}\n\ndata: [DONE]\n\n`);
  });
});

describe("relaySse onText: the text of what the client got, as StreamText.add reads it, parsing no payload twice", () => {
  const head = `"id":"c1","object":"chat.completion.chunk","created":1,"model":"m"`;
  /** A plain content chunk (read without JSON.parse) in OpenAI's member order. */
  const plain = (content: string, index = 0) =>
    `{${head},"choices":[{"index":${index},"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}],"usage":null}`;
  const events = [
    `{${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`,
    plain("Hello "),
    plain("ignored: choice 1", 1),
    `{${head},"choices":[{"index":1,"delta":{"content":"also ignored"}},{"index":0,"delta":{"content":"my "}}],"usage":null}`,
    `{"object":"text_completion","choices":[{"index":0,"text":"secret ","finish_reason":null}]}`,
    `{"choices":[{"delta":{"content":"friend"}}], "usage": null}`,
    "not json, relayed as it came",
    "[1,2]",
    `{${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
    `{${head},"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":5,"total_tokens":6}}`,
    "[DONE]",
  ];

  /** Holds every payload; at the end releases them with "secret" masked, an extra chunk first, the last one dropped. */
  const maskingGuard = (): StreamOutputGuard => {
    const held: string[] = [];
    return {
      onData: (payload) => {
        held.push(payload);
        return "hold";
      },
      onEnd: () => ({
        decisions: [],
        release: [plain("[note] "), ...held.slice(0, -1).map((p) => p.replaceAll("secret", "******"))],
      }),
    };
  };
  const passingGuard = (): StreamOutputGuard => ({
    onData: (p) => [p],
    onEnd: () => ({ decisions: [], release: [] }),
  });

  const cases: Array<[string, () => Partial<RelayOptions>]> = [
    ["no guard, usage stripped", () => ({ stripUsage: true })],
    ["no guard, usage kept", () => ({ stripUsage: false })],
    ["a guard passing each payload at once", () => ({ stripUsage: true, guard: passingGuard() })],
    ["a guard holding, masking, adding and dropping", () => ({ stripUsage: true, guard: maskingGuard() })],
    ["a stream cut at its reservation", () => ({ stripUsage: true, meter: new OutputMeter(3, undefined) })],
  ];
  for (const [name, options] of cases) {
    it(`${name}: the same text as StreamText.add of each payload written`, async () => {
      const byPayload = new StreamText();
      const byText = new StreamText();
      const { received } = await relay(events, {
        stripUsage: true,
        ...options(),
        onPayload: (payload) => byPayload.add(payload),
        onText: (text) => byText.addText(text),
      });
      const fromClient = new StreamText();
      for (const data of received) fromClient.add(data);
      expect(byText.value()).toBe(byPayload.value());
      expect(byText.value()).toBe(fromClient.value());
    });
  }

  it("parses an unchanged payload only where the relay reads it, a rewritten one once more", async () => {
    const parse = vi.spyOn(JSON, "parse");
    const texts: string[] = [];
    let calls: unknown[];
    try {
      await relay(events, { stripUsage: false, guard: maskingGuard(), onText: (text) => texts.push(text) });
    } finally {
      calls = parse.mock.calls.map(([arg]) => arg);
      parse.mockRestore();
    }
    const whole = calls.filter((arg) => typeof arg === "string" && arg.includes('"choices"'));
    // Read by the relay: every chunk but the plain ones; parsed again: the rewritten one and the one the guard added.
    const read = [0, 3, 4, 5, 8, 9].map((i) => events[i]!);
    const rewritten = events[4]!.replace("secret", "******");
    expect(whole.sort()).toEqual([...read, rewritten, plain("[note] ")].sort());
    expect(texts.join("")).toBe("[note] Hello my ****** friend");
  });
});
