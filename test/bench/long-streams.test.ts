import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Target } from "../../bench/lib/load.js";
import { type FullGateway, runScaling, type StartedGateway } from "../../bench/lib/scaling.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";

/** A target named `name` that streams from `upstream` (the fake upstream stands in for any server here). */
const targetOf = (name: string, upstream: FakeUpstream): Target => ({
  name,
  origin: new URL(upstream.url).origin,
  path: "/v1/chat/completions",
  headers: { "content-type": "application/json" },
  model: "fake-model",
});

describe("the benchmark's long streams", () => {
  const upstreams: FakeUpstream[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) upstreams.push(await startFakeUpstream({ record: false }));
  });
  afterAll(async () => {
    for (const u of upstreams) await u.close();
  });

  it("run on a new process of each full-pipeline gateway, whose CPU is the row's, and stop it after", async () => {
    const [base, running, fresh] = upstreams as [FakeUpstream, FakeUpstream, FakeUpstream];
    const gateway: FullGateway = {
      target: targetOf("gateway-full", running),
      pid: process.pid,
      databaseUrl: "unused",
      key: "unused",
    };
    const started: Array<FullGateway> = [];
    let stopped = 0;
    const results = await runScaling(
      {
        upstream: targetOf("upstream", base),
        passthrough: targetOf("passthrough", base),
        full: [gateway],
        meters: [],
        say: () => {},
        startWorkers: () => Promise.reject(new Error("no workers part")),
        startFresh: async (g): Promise<StartedGateway> => {
          started.push(g);
          return {
            target: { ...g.target, origin: new URL(fresh.url).origin },
            pid: process.pid,
            stop: async () => {
              stopped++;
            },
          };
        },
      },
      {
        promptSizes: [],
        keyCounts: [],
        longStreams: 5,
        longStreamChunks: 20,
        longStreamConcurrency: 2,
        workers: [],
        seconds: 1,
        rate: 10,
        connections: 2,
        rounds: 1,
      },
    );
    const rows = results.longStreams!.rows;
    expect(rows.map((r) => [r.target, r.streams, r.failures])).toEqual([
      ["upstream", 5, 0],
      ["passthrough", 5, 0],
      ["gateway-full", 5, 0],
    ]);
    expect(started).toEqual([gateway]);
    expect(stopped).toBe(1);
    // The gateway that ran the earlier parts serves none of them: the new process serves the warm-up wave and all 5.
    expect(running.completions).toBe(0);
    expect(fresh.completions).toBe(2 + 5);
    expect(base.completions).toBe(2 * (2 + 5));
    expect(rows[2]!.cpuMs["gateway-full"]).toBeGreaterThanOrEqual(0);
  });
});
