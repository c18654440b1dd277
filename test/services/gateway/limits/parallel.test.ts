/**
 * LiteLLM's `max_parallel_requests` across instances (issue 28, "Backpressure"): two instances sharing Redis
 * admit exactly N calls of a key in flight together, refuse the rest with 429 "Max parallel request limit
 * reached" and `retry-after`, admit again when one finishes, and a crashed instance's calls stop holding the key
 * once their slots expire. The same in process. And through the gateway: N+k concurrent slow streams, exactly N
 * answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import { SLOT_HOLD_MS } from "../../../../services/gateway/src/limits/parallel.js";
import type { Admission } from "../../../../services/gateway/src/limits/types.js";
import { systemClock } from "../../../../services/gateway/src/time/clock.js";
import {
  type MisbehavingUpstream,
  startMisbehavingUpstream,
} from "../../../fixtures/misbehaving-upstream.js";
import { limitsPerMode, openLimits } from "../../../helpers/limits.js";
import { deleteKeys, ManualClock, uniquePrefix } from "../../../helpers/redis.js";
import { type ChatHarness, startChatHarness } from "../endpoints/chat-completions/harness.js";
import { keySubject, refusal, request, T0, userSubject } from "./subjects.js";

const clock = new ManualClock(T0 + 5_000);
const { shared, local: locals, prefix } = limitsPerMode(clock, "limits-parallel");

describe.each([
  ["two instances over Redis", () => shared],
  ["in process", () => [locals[0]!, locals[0]!]],
])("max_parallel_requests, %s", (_name, instances) => {
  it("admits exactly N of N+k concurrent calls, refuses the rest with LiteLLM's 429, admits again when one ends", async () => {
    const [a, b] = instances();
    const n = 3;
    const key = keySubject({ maxParallelRequests: n, maxBudget: 10, alias: "parallel" });
    const outcomes = await Promise.allSettled(
      Array.from({ length: n + 5 }, (_, i) => (i % 2 === 0 ? a! : b!).admitter.admit(request([key], 0.01))),
    );
    const admitted = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    expect(admitted).toHaveLength(n);
    for (const o of outcomes) {
      if (o.status === "fulfilled") continue;
      expect(o.reason.status).toBe(429);
      expect(o.reason.type).toBe("rate_limit_error");
      expect(o.reason.headers["retry-after"]).toBe("1");
      expect(o.reason.message).toMatch(/^Max parallel request limit reached\. Hit limit for key "parallel"/);
      expect(o.reason.message).toContain(`max_parallel_requests ${n}, calls in flight ${n}`);
    }
    admitted[0]!.settle({ cost: 0.01, totalTokens: 1 });
    const next = await b!.admitter.admit(request([key], 0.01));
    expect((await refusal(a!.admitter.admit(request([key], 0.01)))).message).toContain("Max parallel");
    for (const admission of [...admitted.slice(1), next]) admission.release();
    (await a!.admitter.admit(request([key]))).release();
  });

  it("counts the user's limit across its keys", async () => {
    const [a, b] = instances();
    const user = userSubject({ maxParallelRequests: 1 });
    const first = await a!.admitter.admit(request([keySubject(), user]));
    const error = await refusal(b!.admitter.admit(request([keySubject(), user])));
    expect(error.message).toContain(`user "${user.id}"`);
    first.release();
  });
});

describe("max_parallel_requests after a crash", () => {
  it("the slots of an instance that died holding them free once they expire", async () => {
    const dying = await openLimits(clock, prefix);
    const key = keySubject({ maxParallelRequests: 2 });
    const held: Admission[] = [
      await dying.admitter.admit(request([key])),
      await dying.admitter.admit(request([key])),
    ];
    await dying.close({ returnLeases: false });
    expect(held).toHaveLength(2);
    expect((await refusal(shared[0]!.admitter.admit(request([key])))).message).toContain("Max parallel");
    clock.advance(SLOT_HOLD_MS + 1);
    (await shared[0]!.admitter.admit(request([key]))).release();
  });
});

describe("max_parallel_requests through the gateway", () => {
  let upstream: MisbehavingUpstream;
  const gateways: ChatHarness[] = [];
  const realPrefix = uniquePrefix("parallel-gateway");
  const real: Limits[] = [];
  beforeAll(async () => {
    upstream = await startMisbehavingUpstream();
    for (let i = 0; i < 2; i++) real.push(await openLimits(systemClock, realPrefix));
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    for (const l of real) await l.close();
    await deleteKeys(realPrefix);
    await upstream.close();
  });

  it("N + k concurrent slow streams over two instances: exactly N answered, k refused with 429", async () => {
    upstream.behave({ kind: "endless", everyMs: 50 });
    const n = 2;
    const subject = keySubject({ maxParallelRequests: n });
    for (const l of real)
      gateways.push(
        await startChatHarness({ upstreamUrl: upstream.url, subjects: [subject], admitter: l.admitter }),
      );
    const abort = new AbortController();
    const ask = { model: "general", messages: [{ role: "user", content: "go" }], stream: true };
    const responses = await Promise.all(
      Array.from({ length: n + 3 }, (_, i) => gateways[i % 2]!.chat(ask, { signal: abort.signal })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(n);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(3);
    for (const res of refused) {
      expect(res.headers.get("retry-after")).toBe("1");
      const body = (await res.json()) as { error: { message: string; type: string } };
      expect(body.error.type).toBe("rate_limit_error");
      expect(body.error.message).toContain("Max parallel request limit reached");
    }
    abort.abort();
  });
});
