/**
 * The router's picking rules against real HTTP upstreams (the OpenAI-compatible contract fake): per-deployment
 * rpm/tpm, weighted shuffle, least-busy, usage-based routing, tag filtering and stream_timeout, as LiteLLM
 * documents them (docs.litellm.ai/docs/routing, proxy/tag_routing, proxy/timeout).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadModelConfig } from "../../../../services/gateway/src/config/load-model-config.js";
import type { Deployment } from "../../../../services/gateway/src/config/types.js";
import { GatewayError } from "../../../../services/gateway/src/errors/gateway-error.js";
import { createMetrics } from "../../../../services/gateway/src/metrics/metrics.js";
import { Router, type UpstreamResponse } from "../../../../services/gateway/src/router/router.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { writeConfig } from "../../../helpers/gateway.js";
import { ManualClock } from "../../../helpers/redis.js";
import { rejectionOf } from "../../../helpers/rejection.js";

let a: FakeUpstream;
let b: FakeUpstream;
const routers: Router[] = [];
/** 2026-01-01T00:00:10Z: 50 s before the minute turns. */
const T0 = Date.UTC(2026, 0, 1, 0, 0, 10);

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
});
afterAll(async () => {
  await Promise.all(routers.map((r) => r.close()));
  await Promise.all([a.close(), b.close()]);
});
afterEach(() => {
  a.requests.length = 0;
  b.requests.length = 0;
});

/** A deterministic uniform generator (mulberry32), so shuffles are reproducible. */
function seeded(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r ^= r + Math.imul(r ^ (r >>> 7), 61 | r);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** A router over a config whose deployments are written as `entries` (YAML list items under model_list). */
function routerFor(entries: string, settings = "", clock = new ManualClock(T0), random = seeded(1)) {
  const yaml = `router_settings:\n  num_retries: 1\n${settings}model_list:\n${entries}`;
  const config = loadModelConfig(writeConfig(yaml), {});
  const router = new Router(config, createMetrics(), clock, { random });
  routers.push(router);
  return { router, clock, config };
}

/** A model_list entry on a fake upstream; `extra` lines go under litellm_params. */
const entry = (name: string, upstream: FakeUpstream, id: string, extra = "", info = "") =>
  `  - model_name: ${name}\n    litellm_params:\n      model: openai/fake-model\n      api_base: ${upstream.url}\n      input_cost_per_token: 0\n      output_cost_per_token: 0\n${extra}    model_info:\n      id: ${id}\n${info}`;

const body = (content = "hi", extra: Record<string, unknown> = {}) => ({
  model: "m",
  messages: [{ role: "user", content }],
  ...extra,
});

/** Sends, reads the body (as the chat route does), and returns the deployment id. */
async function call(router: Router, model = "m", extra: Record<string, unknown> = {}): Promise<string> {
  const response = await router.send(model, body("hi", extra), new AbortController().signal);
  await response.body.text();
  return response.deployment.id;
}

/** The GatewayError a send fails with. */
const refusal = (promise: Promise<unknown>) => rejectionOf(promise, GatewayError);

describe("litellm_params.rpm / tpm: per-deployment limits per minute", () => {
  it("skips a deployment at its rpm, and answers 429 with retry-after naming the group when all are", async () => {
    const { router, clock } = routerFor(
      entry("m", a, "a", "      rpm: 2\n") + entry("m", b, "b", "      rpm: 3\n"),
    );
    const used: string[] = [];
    for (let i = 0; i < 5; i++) used.push(await call(router));
    expect(used.filter((id) => id === "a")).toHaveLength(2);
    expect(used.filter((id) => id === "b")).toHaveLength(3);
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(3);

    const error = await refusal(router.send("m", body(), new AbortController().signal));
    expect(error.status).toBe(429);
    expect(error.type).toBe("rate_limit_error");
    expect(error.message).toContain("No deployments available for selected model=m");
    expect(error.message).toContain("rpm/tpm limit");
    expect(error.headers["retry-after"]).toBe("50"); // T0 is 50 s before the minute turns
    expect(a.requests.length + b.requests.length).toBe(5); // nothing was sent

    clock.advance(50_000); // the next minute: counters start again
    expect(await call(router)).toMatch(/^[ab]$/);
  });

  it("moves to the fallback group when every deployment of the group is at its limit", async () => {
    const { router } = routerFor(
      entry("m", a, "a", "      rpm: 1\n") + entry("backup", b, "b"),
      "  fallbacks: [{m: [backup]}]\n",
    );
    expect(await call(router)).toBe("a");
    expect(await call(router)).toBe("b");
  });

  it("counts a call's estimated tokens against tpm, and corrects them with its actual usage", async () => {
    const { router } = routerFor(entry("m", a, "a", "      tpm: 100\n"));
    const signal = new AbortController().signal;
    const first = await router.send("m", body(), signal, { estimatedTokens: 60 });
    await first.body.text();
    expect(router.load(first.deployment).tokens).toBe(60);
    const error = await refusal(router.send("m", body(), signal, { estimatedTokens: 60 }));
    expect(error.status).toBe(429);

    router.recordUsage(first, 10); // the call used 10 tokens, not 60
    expect(router.load(first.deployment).tokens).toBe(10);
    const second = await router.send("m", body(), signal, { estimatedTokens: 60 });
    await second.body.text();
    expect(router.load(second.deployment).tokens).toBe(70);
  });

  it("estimates a call's prompt tokens from its body when the caller gives no estimate", async () => {
    const { router } = routerFor(entry("m", a, "a", "      tpm: 1000\n"));
    const response = await router.send("m", body("x".repeat(400)), new AbortController().signal);
    await response.body.text();
    // {"model":"m","messages":[...400 x...]} is a little over 400 bytes: ~100+ tokens at 4 bytes a token
    expect(router.load(response.deployment).tokens).toBeGreaterThan(100);
    expect(router.load(response.deployment).tokens).toBeLessThan(130);
  });
});

describe("routing_strategy", () => {
  it("simple-shuffle picks in proportion to litellm_params.weight", async () => {
    const { router } = routerFor(
      entry("m", a, "a", "      weight: 3\n") + entry("m", b, "b", "      weight: 1\n"),
      "",
      new ManualClock(T0),
      seeded(42),
    );
    const counts: Record<string, number> = { a: 0, b: 0 };
    for (let i = 0; i < 200; i++) {
      const id = await call(router);
      counts[id] = (counts[id] ?? 0) + 1;
    }
    // 3:1 expected (150/50); a seeded generator makes the split reproducible, the bounds say what it means
    expect(counts.a).toBeGreaterThan(130);
    expect(counts.a).toBeLessThan(170);
    expect(counts.a! + counts.b!).toBe(200);
  });

  it("least-busy sends to the deployment with the fewest requests in flight; a stream counts until closed", async () => {
    const { router } = routerFor(entry("m", a, "a") + entry("m", b, "b"), "  routing_strategy: least-busy\n");
    const holdA = a.holdNextStream();
    const holdB = b.holdNextStream();
    const signal = new AbortController().signal;
    const first = await router.send("m", body("one", { stream: true }), signal);
    expect(router.load(first.deployment).inFlight).toBe(1);
    const second = await router.send("m", body("two", { stream: true }), signal);
    expect(second.deployment.id).not.toBe(first.deployment.id);
    // finish the first stream: its deployment is idle again, the other one is still busy
    (first.deployment.id === "a" ? holdA : holdB).release();
    for await (const _ of first.body) {
      // drain
    }
    await new Promise((r) => setImmediate(r));
    expect(router.load(first.deployment).inFlight).toBe(0);
    expect(await call(router)).toBe(first.deployment.id);
    (second.deployment.id === "a" ? holdA : holdB).release();
    second.body.on("error", () => {}); // destroying an unfinished undici body emits RequestAbortedError
    second.body.destroy();
    await new Promise((r) => setImmediate(r));
    expect(router.load(second.deployment).inFlight).toBe(0);
  });

  it("usage-based-routing sends to the deployment with the fewest tokens this minute", async () => {
    const { router } = routerFor(
      entry("m", a, "a") + entry("m", b, "b"),
      "  routing_strategy: usage-based-routing\n",
    );
    const signal = new AbortController().signal;
    const first = await router.send("m", body(), signal, { estimatedTokens: 500 });
    await first.body.text();
    const next = await router.send("m", body(), signal, { estimatedTokens: 10 });
    await next.body.text();
    expect(next.deployment.id).not.toBe(first.deployment.id);
    // 500 vs 10 tokens: the lighter one again, twice
    expect(await call(router)).toBe(next.deployment.id);
  });
});

describe("usage-based-routing without an estimate from the caller", () => {
  it("counts each call's prompt, estimated from its body, against its deployment", async () => {
    const { router } = routerFor(
      entry("m", a, "a") + entry("m", b, "b"),
      "  routing_strategy: usage-based-routing\n",
    );
    const signal = new AbortController().signal;
    const big = await router.send("m", body("x".repeat(4000)), signal);
    await big.body.text();
    expect(router.load(big.deployment).tokens).toBeGreaterThan(1000);
    const other = await call(router);
    expect(other).not.toBe(big.deployment.id);
    expect(await call(router)).toBe(other);
  });
});

describe("tag-based routing (router_settings.enable_tag_filtering)", () => {
  const tagged = () =>
    routerFor(
      entry("m", a, "cpu", "", "      tags: [default]\n") + entry("m", b, "npu", "      tags: [npu, fast]\n"),
      "  enable_tag_filtering: true\n",
    );

  it("sends a request tagged npu (tags or metadata.tags) to the deployment carrying the tag", async () => {
    const { router } = tagged();
    for (let i = 0; i < 5; i++) expect(await call(router, "m", { tags: ["npu"] })).toBe("npu");
    expect(await call(router, "m", { tags: "fast" })).toBe("npu");
    expect(await call(router, "m", { metadata: { tags: ["npu"] } })).toBe("npu");
    expect(await call(router, "m", {})).toBe("cpu");
  });

  it("sends untagged requests to the deployments tagged default", async () => {
    const { router } = tagged();
    for (let i = 0; i < 5; i++) expect(await call(router)).toBe("cpu");
  });

  it("does not send LiteLLM's tags field upstream (OpenAI's API refuses unknown fields)", async () => {
    const { router } = tagged();
    await call(router, "m", { tags: ["npu"], metadata: { tags: ["npu"] } });
    expect(b.requests[0]?.body).not.toHaveProperty("tags");
    expect(b.requests[0]?.body).toHaveProperty("metadata");
  });

  it("answers 400 when no deployment carries the request's tags, and when tags is malformed", async () => {
    const { router } = tagged();
    const signal = new AbortController().signal;
    const none = await refusal(router.send("m", body("hi", { tags: ["gpu"] }), signal));
    expect(none.status).toBe(400);
    expect(none.code).toBe("no_deployments_with_tag_routing");
    expect(none.message).toContain("No deployment of model=m matches tags=gpu");
    const malformed = await refusal(router.send("m", body("hi", { tags: [1, 2] }), signal));
    expect(malformed.status).toBe(400);
    expect(malformed.param).toBe("tags");
    expect(a.requests.length + b.requests.length).toBe(0);
  });

  it("with tag_filtering_match_any: false, a deployment needs every tag of the request", async () => {
    const { router } = routerFor(
      entry("m", a, "npu-only", "      tags: [npu]\n") +
        entry("m", b, "npu-fast", "      tags: [npu, fast]\n"),
      "  enable_tag_filtering: true\n  tag_filtering_match_any: false\n",
    );
    for (let i = 0; i < 4; i++) expect(await call(router, "m", { tags: ["npu", "fast"] })).toBe("npu-fast");
  });

  it("ignores a request's tags when tag filtering is off", async () => {
    const { router } = routerFor(entry("m", a, "a", "      tags: [npu]\n") + entry("m", b, "b"));
    const used = new Set<string>();
    for (let i = 0; i < 12; i++) used.add(await call(router, "m", { tags: ["npu"] }));
    expect(used).toEqual(new Set(["a", "b"]));
  });
});

describe("stream_timeout vs timeout", () => {
  it("retries a stream whose upstream sends nothing within stream_timeout on another deployment", async () => {
    const { router } = routerFor(
      entry("m", a, "a", "      timeout: 30\n      stream_timeout: 0.2\n") +
        entry("m", b, "b", "      timeout: 30\n      stream_timeout: 0.2\n"),
    );
    a.hangNext(1);
    b.hangNext(1);
    // both deployments hang once: the first attempt times out after stream_timeout, the retry goes to the
    // other deployment (also hung) and times out too, so the call fails as a timeout, not after 30 s
    const error = await refusal(router.send("m", body("s", { stream: true }), new AbortController().signal));
    expect(error.status).toBe(504);
    expect(error.message).toContain("timed out after 2 attempts");
    // with one hang left on neither, the next stream is answered
    const ok = await router.send("m", body("s", { stream: true }), new AbortController().signal);
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
  });

  it("does not apply stream_timeout to a non-streamed call", async () => {
    const { router } = routerFor(entry("m", a, "a", "      timeout: 30\n      stream_timeout: 0.1\n"));
    a.hangNext(1);
    const abort = new AbortController();
    const pending = router.send("m", body(), abort.signal).then(
      () => "answered",
      (e: unknown) => (e instanceof GatewayError ? `failed ${e.status}` : "aborted"),
    );
    await new Promise((r) => setTimeout(r, 500)); // five stream_timeouts
    abort.abort(new Error("test done"));
    expect(await pending).toBe("aborted"); // still waiting under `timeout` when aborted
  });

  it("times out a stream that stalls between chunks after stream_timeout", async () => {
    const { router } = routerFor(entry("m", a, "a", "      timeout: 30\n      stream_timeout: 0.2\n"));
    const hold = a.holdNextStream();
    const response: UpstreamResponse = await router.send(
      "m",
      body("s", { stream: true }),
      new AbortController().signal,
    );
    await hold.firstChunkSent;
    const outcome = await (async () => {
      try {
        for await (const _ of response.body) {
          // read until the stall
        }
        return "ended";
      } catch (error) {
        return (error as Error).name;
      }
    })();
    hold.release();
    expect(outcome).toBe("BodyTimeoutError");
  });
});

describe("a deployment's counters", () => {
  it("are kept per deployment object, so two groups with the same upstream do not share limits", async () => {
    const { router, config } = routerFor(
      entry("m", a, "a1", "      rpm: 1\n") + entry("n", a, "a2", "      rpm: 1\n"),
    );
    expect(await call(router, "m")).toBe("a1");
    expect(await call(router, "n")).toBe("a2");
    const [d1, d2] = config.deployments as [Deployment, Deployment];
    expect(router.load(d1)).toEqual({ inFlight: 0, requests: 1, tokens: 0 }); // body read: no longer in flight
    expect(router.load(d2)).toEqual({ inFlight: 0, requests: 1, tokens: 0 });
  });
});
