/**
 * A burst over two gateway instances sharing Redis: the gateway's own busy event loop makes Redis replies look
 * late, which must not let either instance admit calls that the shared budget would refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallGuard } from "../../../../services/gateway/src/guardrails/types.js";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import type { CallResult } from "../../../../services/gateway/src/pipeline/types.js";
import { systemClock } from "../../../../services/gateway/src/time/clock.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { openLimits } from "../../../helpers/limits.js";
import { deleteKeys, uniquePrefix, waitFor } from "../../../helpers/redis.js";
import { type ChatHarness, startChatHarness } from "../endpoints/chat-completions/harness.js";
import { keySubject, request } from "./subjects.js";

const prefix = uniquePrefix("limits-burst");
let upstream: FakeUpstream;
const limits: Limits[] = [];
const instances: ChatHarness[] = [];
const results: CallResult[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
});
afterAll(async () => {
  await Promise.all(instances.map((i) => i.close()));
  await Promise.all(limits.map((l) => l.close()));
  await upstream.close();
  await deleteKeys(prefix);
});

/** Blocks the event loop for `ms`, as a saturated CPU does. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * A saturated CPU: every 100th admitted call, the event loop is blocked longer than the 200 ms Redis command
 * timeout, while other admits are in flight and Redis itself answers at once.
 */
let admittedCalls = 0;
const saturatedCpu: CallGuard = {
  async checkInput() {
    if (++admittedCalls % 100 === 0) blockEventLoop(300);
    return { decisions: [] };
  },
  async checkOutput() {
    return { decisions: [] };
  },
  streamOutput: () => undefined,
};

describe("burst over two instances", () => {
  it("a blocked event loop makes Redis replies late: no instance admits past the shared budget", async () => {
    const pair = [await openLimits(systemClock, prefix), await openLimits(systemClock, prefix)];
    limits.push(...pair);
    const key = keySubject({ maxBudget: 0.5, alias: "late" });
    const estimate = 0.002; // 250 calls fit
    const admitAll = (count: number) =>
      Array.from({ length: count }, (_, i) => pair[i % 2]!.admitter.admit(request([key], estimate)));
    // 100 calls in flight, known to Redis only.
    const first = await Promise.all(admitAll(100));
    // 1,000 more: sent to Redis, which answers at once, but the loop is blocked past the command timeout.
    const burst = Promise.allSettled(admitAll(1000));
    blockEventLoop(300);
    const outcomes = await burst;
    const admitted = [...first, ...outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []))];
    for (const o of outcomes) {
      if (o.status === "rejected") expect((o.reason as { status: number }).status).toBe(429);
    }
    // Every admitted call may spend its whole reservation: together they must fit the budget.
    expect(admitted.length * estimate).toBeLessThanOrEqual(0.5 + 1e-9);
    expect(admitted.length).toBeGreaterThanOrEqual(200);
    for (const admission of admitted) admission.settle({ cost: estimate, totalTokens: 10 });
  });

  it("1,000 calls at once against a $0.50 key spend no more than the budget", async () => {
    const budget = 0.5;
    const subject = keySubject({ maxBudget: budget, alias: "burst" });
    for (let i = 0; i < 2; i++) {
      const shared = await openLimits(systemClock, prefix);
      limits.push(shared);
      instances.push(
        await startChatHarness({
          upstreamUrl: upstream.url,
          subjects: [subject],
          admitter: shared.admitter,
          guard: saturatedCpu,
          observers: [{ onCallFinished: (_call, result) => results.push(result) }],
        }),
      );
    }
    // The fake echoes the question: ~100 prompt and ~103 completion tokens, about $0.002 a call at
    // $0.00001/token, close to what each call reserves (its prompt estimate plus max_tokens).
    const question = "x".repeat(400);
    const statuses = await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        const res = await instances[i % 2]!.chat({
          model: "general",
          messages: [{ role: "user", content: question }],
          max_tokens: 103,
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    await waitFor("every call observed", () => results.length === 1000, 10_000);
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted).toBeGreaterThan(100);
    const spent = results.reduce((sum, r) => sum + r.cost, 0);
    expect(spent).toBeLessThanOrEqual(budget);
  });
});
