import { describe, expect, it } from "vitest";
import { presidioAnalyzer } from "../../../../services/gateway/src/guardrails/pii/presidio-client.js";
import type {
  StreamOutputEnd,
  StreamOutputGuard,
} from "../../../../services/gateway/src/guardrails/types.js";
import { CARD, call, EMAIL, piiPolicy, testEngine } from "./helpers.js";

/** The SSE data payloads of a streamed answer whose content arrives in `pieces`, then usage ([DONE] is the relay's). */
function payloads(pieces: string[]): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({
      id: "c1",
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  return [
    chunk({ role: "assistant", content: "" }),
    ...pieces.map((p) => chunk({ content: p })),
    chunk({}, "stop"),
    JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [], usage: { total_tokens: 9 } }),
  ];
}

/** Feeds the payloads as the relay does; returns what was forwarded during the stream, and the end. */
async function relay(guard: StreamOutputGuard, data: string[]) {
  const during: string[] = [];
  for (const d of data) {
    const out = await guard.onData(d);
    if (out !== "hold") during.push(...out);
  }
  return { during, end: await guard.onEnd() };
}

/** The payloads released at the end (fails on a block). */
function released(end: StreamOutputEnd): string[] {
  if ("block" in end) throw new Error(`unexpected block: ${end.block.message}`);
  return end.release;
}

/** The client-visible text of forwarded payloads. */
function text(forwarded: string[]): string {
  return forwarded
    .flatMap((p) => (JSON.parse(p) as { choices: Array<{ delta?: { content?: string } }> }).choices)
    .map((c) => c.delta?.content ?? "")
    .join("");
}

// The email is split across chunks: only the whole answer reveals it.
const split = ["Contact ", EMAIL.slice(0, 6), EMAIL.slice(6), " today."];

describe("stream output guard", () => {
  it("no output guard when the PII scope is input only, or the key turns it off", () => {
    expect(testEngine({ pii: piiPolicy() }).engine.streamOutput(call(["hi"]))).toBeUndefined();
    const both = testEngine({ pii: piiPolicy({ scope: "both" }) });
    expect(both.engine.streamOutput(call(["hi"], { guardrails: { pii: "off" } }))).toBeUndefined();
  });

  describe("stream_output: buffer", () => {
    it("holds everything, then sends the answer masked (PII split across chunks)", async () => {
      const t = testEngine({ pii: piiPolicy({ scope: "output", streamOutput: "buffer" }) });
      const data = payloads(split);
      const { during, end } = await relay(t.engine.streamOutput(call(["hi"]))!, data);
      expect(during).toEqual([]);
      const out = released(end);
      expect(out).toHaveLength(data.length);
      expect(text(out)).toBe("Contact <EMAIL_ADDRESS> today.");
      expect(out.at(-1)).toBe(data.at(-1)); // usage chunk untouched
      expect(end.decisions).toEqual([
        expect.objectContaining({ hook: "post_call", action: "mask", mode: "enforce" }),
      ]);
      expect(await t.count("pii", "mask", "post_call")).toBe(1);
    });

    it("blocks before any of the answer was sent", async () => {
      const t = testEngine({ pii: piiPolicy({ scope: "output", streamOutput: "buffer" }) });
      const { during, end } = await relay(
        t.engine.streamOutput(call(["hi"]))!,
        payloads([`Your card: ${CARD}`]),
      );
      expect(during).toEqual([]);
      expect("block" in end && end.block).toMatchObject({
        status: 400,
        message: "Blocked PII entity detected: CREDIT_CARD by Guardrail: pii",
      });
      expect(end.decisions).toEqual([expect.objectContaining({ hook: "post_call", action: "block" })]);
      expect(await t.count("pii", "block", "post_call")).toBe(1);
    });

    it("a clean answer is released unchanged", async () => {
      const t = testEngine({ pii: piiPolicy({ scope: "output" }) });
      const data = payloads(["Nothing ", "personal."]);
      const { end } = await relay(t.engine.streamOutput(call(["hi"]))!, data);
      expect(released(end)).toEqual(data);
      expect(end.decisions[0]?.action).toBe("allow");
    });

    it("analyzer down: fail_closed refuses, fail_open releases unchanged", async () => {
      const down = presidioAnalyzer({ apiBase: "http://127.0.0.1:1", timeoutMs: 200 });
      const closed = testEngine(
        { pii: piiPolicy({ scope: "output", onError: "fail_closed" }) },
        { analyzer: down },
      );
      const closedEnd = (await relay(closed.engine.streamOutput(call(["hi"]))!, payloads(split))).end;
      expect("block" in closedEnd && closedEnd.block.status).toBe(503);
      const open = testEngine(
        { pii: piiPolicy({ scope: "output", onError: "fail_open" }) },
        { analyzer: down },
      );
      const data = payloads(split);
      const { end } = await relay(open.engine.streamOutput(call(["hi"]))!, data);
      expect(released(end)).toEqual(data);
      expect(end.decisions[0]?.action).toBe("error");
    });

    it("monitor mode does not hold the stream", async () => {
      const t = testEngine({ pii: piiPolicy({ scope: "output", mode: "monitor" }) });
      const data = payloads(split);
      const { during, end } = await relay(t.engine.streamOutput(call(["hi"]))!, data);
      expect(during).toEqual(data);
      expect(end).toEqual({
        release: [],
        decisions: [expect.objectContaining({ action: "mask", mode: "monitor" })],
      });
    });
  });

  describe("stream_output: report", () => {
    it("passes every payload at once, decides at the end and records it (PII in the output)", async () => {
      const t = testEngine({ pii: piiPolicy({ scope: "output", streamOutput: "report" }) });
      const data = payloads(split);
      const { during, end } = await relay(t.engine.streamOutput(call(["hi"]))!, data);
      expect(during).toEqual(data);
      expect(text(during)).toContain(EMAIL);
      expect(released(end)).toEqual([]);
      expect(end.decisions).toEqual([
        expect.objectContaining({
          hook: "post_call",
          action: "mask",
          mode: "monitor",
          entities: ["EMAIL_ADDRESS"],
        }),
      ]);
      expect(await t.count("pii", "monitor_mask", "post_call")).toBe(1);
    });

    it("a BLOCK entity is recorded, never thrown (the text already left)", async () => {
      const t = testEngine({ pii: piiPolicy({ scope: "output", streamOutput: "report" }) });
      const { end } = await relay(t.engine.streamOutput(call(["hi"]))!, payloads([`card ${CARD}`]));
      expect(end.decisions[0]).toMatchObject({ action: "block", mode: "monitor" });
      expect(await t.count("pii", "monitor_block", "post_call")).toBe(1);
    });
  });
});
