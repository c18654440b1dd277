/**
 * The semantic cache behind the gateway's gates: its lookup embeds the prompt only after the call is admitted
 * and after the input guard, and embeds the text as guarded. A whole gateway on the embedded PGlite database
 * (pgvector), the PII guard blocking credit card numbers and masking e-mail addresses, the embedding model
 * served by the embeddings contract fake (bag-of-words vectors): a blocked prompt never reaches the embedding
 * upstream, a masked one reaches it masked, a key without budget is refused without an embedding call, and a
 * semantic hit counts once against rpm.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeEmbeddingsCompletions } from "../../../fixtures/openai-embeddings-completions.js";
import type { FakeUpstream } from "../../../fixtures/openai-upstream.js";
import type { TestGateway } from "../../../helpers/gateway.js";
import { CARD } from "../guardrails/helpers.js";
import { newKey, post } from "./harness.js";
import { type SemanticStack, SLOW, startSemanticStack } from "./semantic-harness.js";

const POLICY = `guardrails:
  pii:
    mode: enforce
    entities: {EMAIL_ADDRESS: MASK, CREDIT_CARD: BLOCK}
  prompt_injection:
    mode: "off"
`;

let stack: SemanticStack;
let upstream: FakeUpstream;
let embeddings: FakeEmbeddingsCompletions;
let gw: TestGateway;

beforeAll(async () => {
  stack = await startSemanticStack("semantic-guard", POLICY);
  ({ upstream, embeddings, gw } = stack);
}, SLOW.timeout);
afterAll(async () => {
  await stack?.close();
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
