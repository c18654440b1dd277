/**
 * The benchmark's peer: Portkey's gateway (bench/lib/portkey.ts) starts from its npm package and routes a chat
 * completion to the OpenAI-compatible contract fake by the target's headers, with the upstream's key.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Service } from "../../bench/lib/children.js";
import { startPortkey } from "../../bench/lib/portkey.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";

let upstream: FakeUpstream | undefined;
let portkey: Service | undefined;
afterAll(async () => {
  await portkey?.stop(2000);
  await upstream?.close();
});

describe("bench peer: Portkey's gateway", () => {
  it("answers a chat completion from the bench's upstream through its target's headers", async () => {
    upstream = await startFakeUpstream({ apiKey: "sk-portkey-test", models: ["fake-model"] });
    const started = await startPortkey(upstream.url, "sk-portkey-test");
    portkey = started.service;
    const { target } = started;
    const res = await fetch(`${target.origin}${target.path}`, {
      method: "POST",
      headers: target.headers,
      body: JSON.stringify({ model: target.model, messages: [{ role: "user", content: "peer" }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe("You said: peer");
  }, 60_000);
});
