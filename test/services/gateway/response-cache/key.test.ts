/**
 * The exact cache's key (response-cache/key.ts): canonical over member order, defaults made explicit, delivery
 * members left out, every answer-changing member counted, and the scope, namespace and group version in it.
 */
import { describe, expect, it } from "vitest";
import type { AuthContext } from "../../../../services/gateway/src/auth/types.js";
import {
  cacheKey,
  canonicalJson,
  groupVersions,
  type KeyInput,
  scopeOf,
} from "../../../../services/gateway/src/response-cache/key.js";

const base: KeyInput = {
  callType: "acompletion",
  modelGroup: "general",
  groupVersion: "v1",
  scope: "key:abc",
  namespace: "",
  body: { model: "general", messages: [{ role: "user", content: "hi" }] },
};
const keyOf = (change: Partial<KeyInput> & { body?: Record<string, unknown> }) =>
  cacheKey({ ...base, ...change });
const withBody = (extra: Record<string, unknown>) => keyOf({ body: { ...base.body, ...extra } });

describe("canonicalJson", () => {
  it("sorts members at every depth and leaves undefined out", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}',
    );
  });
});

describe("cacheKey", () => {
  it("is the same for reordered members, spelled-out defaults and max_tokens as max_completion_tokens", () => {
    const key = withBody({ max_tokens: 10 });
    expect(
      keyOf({
        body: {
          max_completion_tokens: 10,
          temperature: 1,
          n: 1,
          top_p: 1,
          messages: [{ content: "hi", role: "user" }],
        },
      }),
    ).toBe(key);
    expect(withBody({ max_tokens: 10, tool_choice: "none" })).toBe(key);
  });

  it("ignores what only changes delivery: stream, stream_options, user, metadata, cache", () => {
    expect(
      withBody({
        stream: true,
        stream_options: { include_usage: true },
        user: "u",
        metadata: { a: 1 },
        cache: {},
      }),
    ).toBe(keyOf({}));
  });

  it.each([
    { temperature: 0.2 },
    { seed: 7 },
    { tools: [{ type: "function", function: { name: "f" } }] },
    { response_format: { type: "json_object" } },
    { stop: ["\n"] },
    { logprobs: true },
    { reasoning_effort: "high" },
    { some_new_parameter: 1 },
  ])("changes with %j", (extra) => {
    expect(withBody(extra)).not.toBe(keyOf({}));
  });

  it("changes with the scope, the namespace, the group version, the model group and the call type", () => {
    const key = keyOf({});
    for (const other of [
      keyOf({ scope: "key:def" }),
      keyOf({ namespace: "eval" }),
      keyOf({ groupVersion: "v2" }),
      keyOf({ modelGroup: "other" }),
      keyOf({ callType: "atext_completion" }),
    ])
      expect(other).not.toBe(key);
  });
});

describe("scopeOf", () => {
  const virtual = (teamId: string | null) =>
    ({ kind: "virtual", keyHash: "h".repeat(64), teamId }) as unknown as AuthContext;
  it("is the key's team, else the key; global when opted in", () => {
    expect(scopeOf(virtual("t1"), "tenant")).toBe("team:t1");
    expect(scopeOf(virtual(null), "tenant")).toBe(`key:${"h".repeat(64)}`);
    expect(scopeOf(virtual("t1"), "global")).toBe("global");
    expect(scopeOf({ kind: "master" } as AuthContext, "tenant")).toBe("master");
  });
});

describe("groupVersions", () => {
  const d = (modelName: string, upstreamModel: string) => ({
    modelName,
    provider: "openai",
    upstreamModel,
    apiBase: "http://x/v1",
    id: `${modelName}-${upstreamModel}`,
  });
  it("changes when a group's deployments change, not with their order", () => {
    const one = groupVersions([d("a", "m1"), d("a", "m2"), d("b", "m1")]);
    const reordered = groupVersions([d("b", "m1"), d("a", "m2"), d("a", "m1")]);
    expect(reordered.get("a")).toBe(one.get("a"));
    expect(groupVersions([d("a", "m1"), d("a", "m3")]).get("a")).not.toBe(one.get("a"));
    expect(one.get("a")).toMatch(/^[0-9a-f]{16}$/);
  });
});
