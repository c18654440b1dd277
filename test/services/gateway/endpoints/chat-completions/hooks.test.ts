/**
 * The pipeline's seams (pipeline/types.ts): an input guard that masks or blocks, output guards on JSON and streamed
 * answers, the guardrail headers, reservation release on a block, and observers told about finished calls. The
 * app is built with buildApp(deps) (see harness.ts) around a real router, in-process admitter and the fake upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../../../../services/gateway/src/errors/gateway-error.js";
import type {
  CallGuard,
  GuardDecision,
  StreamOutputGuard,
} from "../../../../../services/gateway/src/guardrails/types.js";
import type {
  CallContext,
  CallObserver,
  CallResult,
} from "../../../../../services/gateway/src/pipeline/types.js";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { waitFor } from "../../../../helpers/redis.js";
import { sseData } from "../../../../helpers/sse.js";
import { keySubject } from "../../limits/subjects.js";
import { type ChatHarness, startChatHarness } from "./harness.js";

let upstream: FakeUpstream;
let gw: ChatHarness;
const finished: Array<{ call: CallContext; result: CallResult }> = [];
/** $0.009 budget: a call (max_tokens 500 at $0.00001/token, ~$0.0053) fits once, never twice at once. */
const subject = keySubject({ maxBudget: 0.009 });

const decision = (guardrail: string, extra: Partial<GuardDecision>): GuardDecision => ({
  guardrail,
  hook: "pre_call",
  action: "allow",
  mode: "enforce",
  latencyMs: 1,
  ...extra,
});

/** Masks "secret" in the input, blocks "forbidden", upper-cases JSON answers, holds streams to the end. */
const guard: CallGuard = {
  async checkInput(call) {
    const text = JSON.stringify(call.body.messages);
    if (text.includes("forbidden")) {
      call.decisions.push(decision("prompt_injection", { action: "block", score: 0.97 }));
      throw new GatewayError(400, "Blocked by guardrail prompt_injection.", {
        type: "invalid_request_error",
        code: "guardrail_violation",
      });
    }
    if (!text.includes("secret")) return { decisions: [decision("pii", {})] };
    call.body.messages = JSON.parse(text.replaceAll("secret", "[MASKED]"));
    return {
      decisions: [
        decision("pii", { action: "mask", entities: ["EMAIL_ADDRESS", "PHONE_NUMBER"] }),
        decision("prompt_injection", { score: 0.03 }),
      ],
    };
  },
  async checkOutput(_call, completion) {
    const c = completion as { choices: Array<{ message: { content: string } }>; probe?: string };
    if (c.choices[0]?.message.content.includes("as is")) {
      // Looked at, changed nothing it reports: a probe field shows whether the answer was serialised again.
      c.probe = "re-serialised";
      return { decisions: [decision("pii", { hook: "post_call" })] };
    }
    for (const choice of c.choices) choice.message.content = choice.message.content.toUpperCase();
    return { decisions: [decision("pii", { hook: "post_call" })], rewritten: true };
  },
  streamOutput(): StreamOutputGuard {
    const held: string[] = [];
    return {
      onData: (payload) => {
        if (payload.includes("explode")) throw new Error("classifier crashed");
        held.push(payload.replaceAll("said", "SAID"));
        return "hold";
      },
      onEnd: () => {
        const decisions = [decision("pii", { hook: "post_call" })];
        if (!held.some((p) => p.includes("leak"))) return { decisions, release: held };
        const block = new GatewayError(400, "Blocked by guardrail pii.", {
          type: "invalid_request_error",
          code: "guardrail_violation",
        });
        return { decisions: [{ ...decisions[0]!, action: "block" as const }], block };
      },
    };
  },
};
const observer: CallObserver = { onCallFinished: (call, result) => finished.push({ call, result }) };

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gw = await startChatHarness({
    upstreamUrl: upstream.url,
    subjects: [subject],
    guard,
    observers: [observer],
  });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const chat = (content: string, extra: Record<string, unknown> = {}) =>
  gw.chat({ model: "general", messages: [{ role: "user", content }], max_tokens: 500, ...extra });

describe("chat hooks", () => {
  it("masks the input before it goes upstream, rewrites the JSON answer, and names the decisions in headers", async () => {
    const res = await chat("my secret is here");
    expect(res.status).toBe(200);
    const sent = upstream.requests.at(-1)?.body as { messages: Array<{ content: string }> };
    expect(sent.messages[0]?.content).toBe("my [MASKED] is here");
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe("YOU SAID: MY [MASKED] IS HERE");
    expect(res.headers.get("x-litellm-applied-guardrails")).toBe("pii,prompt_injection");
    expect(res.headers.get("x-guardrail-decisions")).toBe(
      "pii=mask:EMAIL_ADDRESS,PHONE_NUMBER; prompt_injection=allow:0.03; pii=allow",
    );
  });

  it("sends the upstream's own bytes when the output guard rewrote nothing (no second serialisation)", async () => {
    const res = await chat("keep it as is");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }>; probe?: string };
    expect(body.choices[0]?.message.content).toBe("You said: keep it as is");
    expect(body.probe).toBeUndefined();
    expect(res.headers.get("x-guardrail-decisions")).toContain("pii=allow");
  });

  it("a block answers the guard's error with its decision and releases the reservation", async () => {
    // Each call reserves more than half the budget: if a blocked call kept its reservation, the next would be refused.
    for (let i = 0; i < 3; i++) {
      const res = await chat("something forbidden");
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("guardrail_violation");
      expect(res.headers.get("x-guardrail-decisions")).toBe("prompt_injection=block:0.97");
    }
    expect((await chat("hello")).status).toBe(200);
  });

  it("feeds a stream through the output guard: held chunks are released at the end, before [DONE]", async () => {
    const res = await chat("stream this", { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-litellm-applied-guardrails")).toBe("pii");
    const text = await res.text();
    const events = sseData(text);
    expect(events.at(-1)).toBe("[DONE]");
    const content = events
      .slice(0, -1)
      .map((e) => JSON.parse(e) as { choices: Array<{ delta: { content?: string } }> })
      .map((c) => c.choices[0]?.delta.content ?? "")
      .join("");
    expect(content).toContain("SAID");
    expect(content).not.toContain("said");
  });

  it("a stream the output guard blocks at the end gets its error event instead of the held chunks and [DONE]", async () => {
    finished.length = 0;
    const res = await chat("please leak it", { stream: true });
    const text = await res.text();
    expect(text).not.toContain("leak");
    expect(text).not.toContain("[DONE]");
    expect(JSON.parse(sseData(text).at(-1)!)).toMatchObject({ error: { code: "guardrail_violation" } });
    await waitFor("the call observed", () => finished.length === 1);
    expect(finished[0]?.result).toMatchObject({ status: 400, errorType: "invalid_request_error" });
    expect(finished[0]?.result.cost).toBeGreaterThan(0);
  });

  it("a stream guard that throws withholds the rest of the answer behind a 500 guardrail_error event", async () => {
    finished.length = 0;
    const text = await (await chat("explode", { stream: true })).text();
    expect(text).not.toContain("explode");
    expect(text).not.toContain("[DONE]");
    expect(JSON.parse(sseData(text).at(-1)!)).toMatchObject({ error: { type: "guardrail_error" } });
    await waitFor("the call observed", () => finished.length === 1);
    expect(finished[0]?.result).toMatchObject({ status: 500, errorType: "guardrail_error" });
  });

  it("tells the observers about every finished call: status, cost, usage and all decisions", async () => {
    finished.length = 0;
    await (await chat("stream this", { stream: true })).text();
    await (await chat("something forbidden")).text();
    await waitFor("two observed calls", () => finished.length === 2);
    const streamed = finished.find((f) => f.call.stream)!;
    expect(streamed.result.status).toBe(200);
    expect(streamed.result.usage?.total_tokens).toBeGreaterThan(0);
    expect(streamed.result.cost).toBeGreaterThan(0);
    expect(streamed.call.decisions.map((d) => `${d.guardrail}:${d.hook}`)).toEqual([
      "pii:pre_call",
      "pii:post_call",
    ]);
    const blocked = finished.find((f) => !f.call.stream)!;
    expect(blocked.result).toMatchObject({ status: 400, errorType: "invalid_request_error", cost: 0 });
    expect(blocked.result.deployment).toBeUndefined();
  });
});
