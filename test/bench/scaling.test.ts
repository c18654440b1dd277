import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sizeLabel } from "../../bench/lib/format.js";
import { connectionsFor, longStreamBody, promptBody, rateFor } from "../../bench/lib/scaling.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";

describe("scaling request bodies", () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ record: false });
  });
  afterAll(async () => {
    await upstream.close();
  });

  it("a long-stream request makes the fake upstream send exactly that many content chunks", async () => {
    const res = await fetch(`${upstream.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: longStreamBody("fake-model", 1000),
    });
    const events = (await res.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> });
    const content = events.filter((e) => (e.choices[0]?.delta.content ?? "") !== "");
    expect(content).toHaveLength(1000);
  });

  it("a prompt of N bytes carries N characters of text and gets a short answer", async () => {
    const body = promptBody("fake-model", 100_000);
    const parsed = JSON.parse(body) as { messages: Array<{ content: string }> };
    expect(parsed.messages[0]?.content).toHaveLength(100_000);
    const res = await fetch(`${upstream.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(res.status).toBe(200);
    expect((await res.text()).length).toBeLessThan(1000);
  });

  it("uses fewer connections and a lower rate for big bodies", () => {
    expect([1_000, 100_000, 1_000_000].map((b) => connectionsFor(b, 32))).toEqual([32, 8, 2]);
    expect([1_000, 100_000, 1_000_000].map((b) => rateFor(b, 500))).toEqual([500, 200, 20]);
    expect([1_000, 100_000, 1_000_000].map(sizeLabel)).toEqual(["1 KB", "100 KB", "1 MB"]);
  });
});
