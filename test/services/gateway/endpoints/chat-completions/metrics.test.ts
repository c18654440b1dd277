/** The chat path's metric labels never carry a value the client picks freely (a made-up model name). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { type ChatHarness, startChatHarness } from "./harness.js";

let upstream: FakeUpstream;
let gw: ChatHarness;

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  gw = await startChatHarness({ upstreamUrl: upstream.url });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});

const metricsText = async () => (await fetch(`${gw.url}/metrics`)).text();
const ask = (model: string) => gw.chat({ model, messages: [{ role: "user", content: "hi" }] });

describe("metric cardinality", () => {
  it("3,000 unknown model names leave /metrics the same size", async () => {
    expect((await ask("general")).status).toBe(200);
    expect((await ask("nosuch-0")).status).toBe(400);
    const before = await metricsText();
    for (let batch = 1; batch < 3000; batch += 100) {
      const statuses = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const res = await ask(`nosuch-${batch + i}`);
          await res.arrayBuffer();
          return res.status;
        }),
      );
      expect(new Set(statuses)).toEqual(new Set([400]));
    }
    const after = await metricsText();
    expect(after).not.toContain("nosuch-");
    // Counter values grow by a few digits; process metrics (memory, CPU) vary a little.
    expect(Math.abs(after.length - before.length)).toBeLessThan(2048);
    expect(after).toMatch(
      /^litellm_proxy_failed_requests_metric_total\{[^}]*requested_model="unknown",exception_status="400"[^}]*\} 3001$/m,
    );
  });
});
