/**
 * A client that leaves before its answer is complete is recorded as 499 (nginx's "client closed request", as
 * LiteLLM records it), not as an upstream failure: in the request counter, the failure counter and for observers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../../../../../services/gateway/src/pipeline/types.js";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { waitFor } from "../../../../helpers/redis.js";
import { type ChatHarness, startChatHarness } from "./harness.js";

let upstream: FakeUpstream;
let gw: ChatHarness;
const results: CallResult[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gw = await startChatHarness({
    upstreamUrl: upstream.url,
    observers: [{ onCallFinished: (_call, result) => results.push(result) }],
  });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const metricsText = async () => (await fetch(`${gw.url}/metrics`)).text();

/** Sends a call, waits for `ready`, then goes away; resolves with the observed result. */
async function leave(body: Record<string, unknown>, ready: () => Promise<void>): Promise<CallResult> {
  results.length = 0;
  const controller = new AbortController();
  const response = gw.chat(body, { signal: controller.signal }).then(
    async (res) => {
      const reader = res.body!.getReader();
      await reader.read();
      return reader.read();
    },
    () => undefined,
  );
  await ready();
  controller.abort();
  await response.catch(() => undefined);
  await waitFor("the call observed", () => results.length === 1);
  return results[0]!;
}

describe("client leaving", () => {
  it("mid-stream: 499, not 502 upstream_error", async () => {
    const hold = upstream.holdNextStream();
    const result = await leave(
      { model: "general", messages: [{ role: "user", content: "bye" }], stream: true },
      () => hold.firstChunkSent,
    );
    hold.release();
    expect(result.status).toBe(499);
    expect(result.errorType).not.toBe("upstream_error");
    const text = await metricsText();
    expect(text).toMatch(/^litellm_proxy_total_requests_metric_total\{[^}]*status_code="499"\} 1$/m);
    expect(text).not.toMatch(/exception_class="upstream_error"/);
    expect(text).not.toMatch(/status_code="502"/);
  });

  it("while the upstream has not answered yet: 499, not 500", async () => {
    upstream.hangNext(1);
    const before = upstream.requests.length;
    const result = await leave({ model: "general", messages: [{ role: "user", content: "wait" }] }, () =>
      waitFor("the upstream request", () => upstream.requests.length > before),
    );
    expect(result.status).toBe(499);
    const text = await metricsText();
    expect(text).not.toMatch(/status_code="500"/);
  });
});
