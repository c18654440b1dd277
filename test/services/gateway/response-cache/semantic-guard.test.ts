/**
 * The semantic cache behind the gateway's gates: its lookup embeds the prompt only after the call is admitted
 * and after the input guard, and embeds the text as guarded. A whole gateway on the embedded PGlite database
 * (pgvector), the PII guard blocking credit card numbers and masking e-mail addresses, the embedding model
 * served by the embeddings contract fake (bag-of-words vectors): a blocked prompt never reaches the embedding
 * upstream, a masked one reaches it masked, a key without budget is refused without an embedding call, and a
 * semantic hit counts once against rpm.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EMBEDDED_POOL_MAX,
  type EmbeddedDatabase,
  startEmbeddedDatabase,
} from "../../../../services/gateway/src/db/embedded.js";
import {
  type FakeEmbeddingsCompletions,
  startFakeEmbeddingsCompletions,
} from "../../../fixtures/openai-embeddings-completions.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, type TestGateway } from "../../../helpers/gateway.js";
import { deleteKeys, uniquePrefix } from "../../../helpers/redis.js";
import { CARD } from "../guardrails/helpers.js";
import { newKey, post, startCachedGateway } from "./harness.js";

// PGlite creates its database (initdb in WebAssembly) on the first open: seconds, far more on a loaded machine.
const SLOW = { timeout: 240_000 };

const POLICY = `guardrails:
  pii:
    mode: enforce
    entities: {EMAIL_ADDRESS: MASK, CREDIT_CARD: BLOCK}
  prompt_injection:
    mode: "off"
`;

let upstream: FakeUpstream;
let embeddings: FakeEmbeddingsCompletions;
let embedded: EmbeddedDatabase;
let folder: string;
let prefix: string;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  embeddings = await startFakeEmbeddingsCompletions({ bagOfWordsDimensions: 256 });
  folder = mkdtempSync(join(tmpdir(), "gw-semantic-guard-"));
  embedded = await startEmbeddedDatabase(join(folder, "postgres"));
  prefix = uniquePrefix("semantic-guard");
  gw = await startCachedGateway(upstream, {
    databaseUrl: embedded.url,
    prefix,
    poolMax: EMBEDDED_POOL_MAX,
    policy: POLICY,
    moreModels: `${deployment("embed", embeddings.url)}    model_info:\n      mode: embedding\n`,
    cacheParams:
      "    type: postgres-semantic\n    ttl: 120\n    similarity_threshold: 0.9\n    semantic_cache_embedding_model: embed\n",
  });
}, SLOW.timeout);
afterAll(async () => {
  await gw?.close();
  await embedded?.close();
  await upstream?.close();
  await embeddings?.close();
  await deleteKeys(prefix);
  rmSync(folder, { recursive: true, force: true });
});

const chat = (key: string, content: string) =>
  post(gw, key, "/v1/chat/completions", { model: "general", messages: [{ role: "user", content }] });
/** Everything the embedding upstream was sent since request number `from`, as one text. */
const embeddedSince = (from: number) => JSON.stringify(embeddings.requests.slice(from).map((r) => r.body));

describe("the semantic lookup runs after admission and the input guard", SLOW, () => {
  it("never sends a prompt the guard blocks to the embedding upstream", async () => {
    const { key } = await newKey(gw);
    const from = embeddings.requests.length;
    const res = await chat(key, `Please charge my card ${CARD} for the order`);
    expect(res.status).toBe(400);
    expect(embeddedSince(from)).not.toContain(CARD.slice(0, 4));
    expect(embeddings.requests.length).toBe(from);
  });

  it("embeds the masked text of a prompt the guard masks", async () => {
    const { key } = await newKey(gw);
    const from = embeddings.requests.length;
    const res = await chat(key, "Write a short thank-you note to carol@example.org for the flowers");
    expect(res.status).toBe(200);
    const sent = embeddedSince(from);
    expect(embeddings.requests.length).toBe(from + 1);
    expect(sent).not.toContain("carol@example.org");
    expect(sent).toContain("<EMAIL_ADDRESS>");
  });

  it("refuses a key without budget with its 4xx and no embedding call", async () => {
    const { key } = await newKey(gw, { max_budget: 0 });
    const from = embeddings.requests.length;
    const res = await chat(key, "Which planet in the solar system has the most moons");
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(embeddings.requests.length).toBe(from);
  });

  it("counts a semantic hit once against rpm, at $0", async () => {
    const { key } = await newKey(gw, { rpm_limit: 3 });
    expect((await chat(key, "What is the boiling point of water at sea level")).status).toBe(200);
    const before = upstream.completions;
    const hit = await chat(key, "what is the boiling point of water at sea level?");
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-litellm-response-cost")).toBe("0");
    expect(Number(hit.headers.get("x-litellm-semantic-similarity"))).toBeGreaterThanOrEqual(0.9);
    expect(upstream.completions).toBe(before);
    expect((await chat(key, "Name three noble gases")).status).toBe(200);
    expect((await chat(key, "Name three more noble gases")).status).toBe(429);
  });
});
