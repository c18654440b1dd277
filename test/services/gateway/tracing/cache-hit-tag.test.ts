/** A call answered from the response cache is tagged `cache_hit` in its trace (tracing/observer.ts). */
import { describe, expect, it } from "vitest";
import type { CallContext, CallResult } from "../../../../services/gateway/src/pipeline/types.js";
import { callTrace } from "../../../../services/gateway/src/tracing/observer.js";

const call = (hit: boolean | undefined) =>
  ({
    requestId: "0123456789abcdef0123456789abcdef",
    auth: { kind: "master" },
    callType: "acompletion",
    startedAtEpoch: 1_700_000_000_000,
    body: { model: "general", messages: [] },
    clientInput: [],
    inputOf: () => [],
    sessionId: undefined,
    stream: false,
    model: "general",
    decisions: [],
    output: undefined,
    upstreamOutput: undefined,
    firstByteAtEpoch: undefined,
    cache: hit === undefined ? undefined : { key: "k", storageKey: "s", store: true, ttlSeconds: 60, hit },
  }) as unknown as CallContext;

const result: CallResult = { status: 200, cost: 0, durationMs: 3 };

describe("callTrace", () => {
  it("tags a cache hit, and only a hit", () => {
    expect(callTrace(call(true), result).tags).toEqual(["general", "cache_hit"]);
    expect(callTrace(call(false), result).tags).toEqual(["general"]);
    expect(callTrace(call(undefined), result).tags).toEqual(["general"]);
  });
});
