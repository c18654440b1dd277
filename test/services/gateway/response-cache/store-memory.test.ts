/** The in-process store (response-cache/store-memory.ts): entries expire after their ttl; the LRU keeps at most its size. */
import { describe, expect, it } from "vitest";
import { MemoryCacheStore } from "../../../../services/gateway/src/response-cache/store-memory.js";
import type { CachedAnswer } from "../../../../services/gateway/src/response-cache/types.js";
import { ManualClock } from "../../../helpers/redis.js";

const entry = (n: number): string =>
  JSON.stringify({
    v: 1,
    callType: "acompletion",
    answer: { n },
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    cost: 0.001,
    model: "openai/m",
    deploymentId: "d",
    storedAt: 0,
  } satisfies CachedAnswer);

describe("MemoryCacheStore", () => {
  it("expires an entry after its ttl", async () => {
    const clock = new ManualClock(1_000);
    const store = new MemoryCacheStore(10, clock);
    await store.set("k", entry(1), 5);
    expect((await store.get("k"))?.answer).toEqual({ n: 1 });
    clock.advance(5_000);
    expect(await store.get("k")).toBeUndefined();
  });

  it("evicts the least recently used entry past its size", async () => {
    const store = new MemoryCacheStore(2, new ManualClock(0));
    await store.set("a", entry(1), 60);
    await store.set("b", entry(2), 60);
    await store.get("a"); // a is now the most recently used
    await store.set("c", entry(3), 60);
    expect(await store.get("b")).toBeUndefined();
    expect((await store.get("a"))?.answer).toEqual({ n: 1 });
    expect(store.size).toBe(2);
  });
});
