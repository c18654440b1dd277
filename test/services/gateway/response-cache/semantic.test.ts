/**
 * The semantic response cache (`cache_params.type: postgres-semantic`) for real: a whole gateway on the embedded
 * PGlite database (which loads pgvector; the machine's Postgres has none), its embedding model served by the
 * embeddings contract fake with bag-of-words vectors (near-duplicate questions are measurably near, different
 * ones far), chat answers by the OpenAI-compatible fake. A near-duplicate question hits (at $0, with its
 * similarity in a header), a different one misses, two tenants never share, requests with tools are never
 * looked up semantically, and a different system prompt misses. Also: start-up on a Postgres without pgvector
 * stops with a message naming pgvector.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeEmbeddingsCompletions } from "../../../fixtures/openai-embeddings-completions.js";
import type { FakeUpstream } from "../../../fixtures/openai-upstream.js";
import type { TestGateway } from "../../../helpers/gateway.js";
import { metricValue } from "../../../helpers/metrics.js";
import { createTestDatabase } from "../../../helpers/postgres.js";
import { waitFor } from "../../../helpers/redis.js";
import { newKey, post, spendLogs, startCachedGateway } from "./harness.js";
import {
  embedModel,
  SEMANTIC_PARAMS,
  type SemanticStack,
  SLOW,
  startSemanticStack,
} from "./semantic-harness.js";

let stack: SemanticStack;
let upstream: FakeUpstream;
let embeddings: FakeEmbeddingsCompletions;
let prefix: string;
let gw: TestGateway;

beforeAll(async () => {
  // The sweeper of expired rows every 100 ms (a minute by default), for the expiry case below.
  stack = await startSemanticStack("semantic-cache", undefined, { everyMs: 100 });
  ({ upstream, embeddings, gw, prefix } = stack);
}, SLOW.timeout);
afterAll(async () => {
  await stack?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: OpenAI answers, asserted field by field
const json = async (res: Response): Promise<any> => res.json();
const chat = (key: string, body: Record<string, unknown>) =>
  post(gw, key, "/v1/chat/completions", { model: "general", ...body });
const ask = (content: string, system?: string) => [
  ...(system === undefined ? [] : [{ role: "system", content: system }]),
  { role: "user", content },
];
const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }];

describe("the semantic cache on PGlite", SLOW, () => {
  it("answers a near-duplicate question from the cache at $0, with its similarity", async () => {
    const { key, token } = await newKey(gw);
    const first = await chat(key, { messages: ask("What is the capital city of France", "Be brief.") });
    expect(first.status).toBe(200);
    const firstBody = await json(first);
    expect(first.headers.get("x-litellm-semantic-similarity")).toBeNull();
    const upstreamCalls = upstream.completions;

    const near = await chat(key, {
      messages: ask("what is the capital city of France please?", "Be brief."),
    });
    expect(near.status).toBe(200);
    expect(upstream.completions).toBe(upstreamCalls);
    expect(await json(near)).toEqual(firstBody);
    expect(near.headers.get("x-litellm-response-cost")).toBe("0");
    const similarity = Number(near.headers.get("x-litellm-semantic-similarity"));
    expect(similarity).toBeGreaterThanOrEqual(0.9);
    expect(similarity).toBeLessThan(1);
    const rows = await spendLogs(gw, token, 2);
    expect(rows.map((r) => r.cache_hit)).toEqual([false, true]);
    expect(rows[1]?.spend).toBe(0);
  });

  it("replays a near-duplicate hit as a stream when the request streams", async () => {
    const { key } = await newKey(gw);
    await chat(key, { messages: ask("Who painted the Mona Lisa portrait") });
    const before = upstream.completions;
    const res = await chat(key, { messages: ask("who painted the Mona Lisa portrait?!"), stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(Number(res.headers.get("x-litellm-semantic-similarity"))).toBeGreaterThanOrEqual(0.9);
    expect((await res.text()).trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(upstream.completions).toBe(before);
  });

  it("misses a different question", async () => {
    const { key } = await newKey(gw);
    await chat(key, { messages: ask("What is the capital city of France") });
    const before = upstream.completions;
    const other = await chat(key, { messages: ask("How do I bake sourdough bread at home") });
    expect(other.status).toBe(200);
    expect(upstream.completions).toBe(before + 1);
    expect(other.headers.get("x-litellm-semantic-similarity")).toBeNull();
  });

  it("never shares an entry between two tenants", async () => {
    const alice = await newKey(gw);
    const bob = await newKey(gw);
    await chat(alice.key, { messages: ask("Which river flows through Vienna today") });
    const before = upstream.completions;
    const res = await chat(bob.key, { messages: ask("which river flows through Vienna today?") });
    expect(res.status).toBe(200);
    expect(upstream.completions).toBe(before + 1);
    expect(res.headers.get("x-litellm-semantic-similarity")).toBeNull();
  });

  it("never looks up (nor embeds) a request with tools", async () => {
    const { key } = await newKey(gw);
    await chat(key, { messages: ask("Tell me the tallest mountain in Europe"), tools });
    const embedCalls = embeddings.requests.length;
    const before = upstream.completions;
    const res = await chat(key, { messages: ask("tell me the tallest mountain in Europe please"), tools });
    expect(res.status).toBe(200);
    expect(upstream.completions).toBe(before + 1);
    expect(embeddings.requests.length).toBe(embedCalls);
  });

  it("sweeps an expired entry: the gateway runs the sweeper and counts the rows", async () => {
    const { key } = await newKey(gw);
    const swept = () => metricValue(gw.gateway.metrics.registry, "gateway_cache_semantic_swept_rows_total");
    const before = await swept();
    const first = await chat(key, {
      messages: ask("How far away is the Moon from Earth"),
      cache: { ttl: 1 },
    });
    expect(first.status).toBe(200);
    // Stored for 1 s; nothing else writes its filter key, so only the sweeper deletes it.
    await waitFor("the expired entry swept", async () => (await swept()) > before, 15_000, 100);
    const upstreamCalls = upstream.completions;
    const again = await chat(key, { messages: ask("how far away is the Moon from Earth?") });
    expect(again.status).toBe(200);
    expect(upstream.completions).toBe(upstreamCalls + 1);
  });

  it("misses when the system prompt differs", async () => {
    const { key } = await newKey(gw);
    await chat(key, { messages: ask("Name the largest ocean on Earth", "Answer in English.") });
    const before = upstream.completions;
    const res = await chat(key, {
      messages: ask("name the largest ocean on Earth please", "Answer in French."),
    });
    expect(res.status).toBe(200);
    expect(upstream.completions).toBe(before + 1);
  });
});

describe("postgres-semantic on a Postgres without pgvector", () => {
  it("stops the start with a message saying to install pgvector", async (ctx) => {
    const db = await createTestDatabase();
    try {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const available = await client
        .query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        .finally(() => client.end());
      // A Postgres with pgvector would start: this case needs one without (Debian's Postgres 15 has none).
      if (available.rowCount !== 0) ctx.skip();
      await expect(
        startCachedGateway(upstream, {
          databaseUrl: db.url,
          prefix,
          moreModels: embedModel(embeddings.url),
          cacheParams: SEMANTIC_PARAMS,
        }),
      ).rejects.toThrow(/needs the pgvector extension/);
    } finally {
      await db.drop();
    }
  });
});
