/**
 * `POST /v1/embeddings` through the assembled gateway with a virtual key, called with the official `openai`
 * client: every input shape works, the answer is OpenAI's `CreateEmbeddingResponse`, base64 passes through,
 * the spend row is an `aembedding` priced per input token, the requests counter counts it; a model whose
 * provider serves no embeddings, a budget spent on chat completions and a card number in the input are refused.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeEmbedding } from "../../../../fixtures/openai-embeddings-completions.js";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";
import { rejectionOf } from "../../../../helpers/rejection.js";
import { type OpenAIApisGateway, startOpenAIApisGateway } from "../openai-apis-gateway.js";

const POLICY = "guardrails:\n  pii:\n    mode: enforce\n    entities: {CREDIT_CARD: BLOCK}\n";
/** text-embedding-3-small's list price, USD per input token. */
const PRICE = 0.02 / 1e6;

let env: OpenAIApisGateway;
let client: OpenAI;

beforeAll(async () => {
  env = await startOpenAIApisGateway(POLICY);
  client = env.gw.clientWith(await env.newKey());
});
afterAll(async () => {
  await env?.close();
});

const requestIdOf = (response: Response) => response.headers.get("x-request-id") ?? "";

describe("embeddings with the openai SDK", () => {
  it("embeds a string (the SDK asks for base64 and decodes it), books an aembedding at the input price", async () => {
    const before = await env.requests("embed-small", "200");
    const { data, response } = await client.embeddings
      .create({ model: "embed-small", input: "the quick brown fox" })
      .withResponse();
    expect(data.data.map((d) => d.embedding)).toEqual([fakeEmbedding("the quick brown fox")]);
    expect(data.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    // The SDK's default encoding went upstream as it was: the upstream encodes.
    expect(env.fake.requests.at(-1)?.body.encoding_format).toBe("base64");
    expect(env.fake.requests.at(-1)?.body.model).toBe("text-embedding-3-small");
    expect(Number(response.headers.get("x-litellm-response-cost"))).toBeCloseTo(4 * PRICE, 12);
    const row = await env.spendRow(requestIdOf(response));
    expect(row).toMatchObject({
      call_type: "aembedding",
      prompt_tokens: 4,
      completion_tokens: 0,
      stream: false,
    });
    expect(row.spend).toBeCloseTo(4 * PRICE, 12);
    expect(await env.requests("embed-small", "200")).toBe(before + 1);
  });

  it("embeds an array of strings as floats with dimensions; the answer is OpenAI's CreateEmbeddingResponse", async () => {
    const input = ["alpha", "beta gamma", "delta epsilon zeta"];
    const response = await client.embeddings
      .create({ model: "embed-small", input, encoding_format: "float", dimensions: 4, user: "u-1" })
      .asResponse();
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { data: Array<{ index: number; embedding: number[] }> };
    expect(openAISchemaErrors("CreateEmbeddingResponse", answer)).toEqual([]);
    expect(answer.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(answer.data.map((d) => d.embedding)).toEqual(input.map((s) => fakeEmbedding(s, 4)));
    expect(env.fake.requests.at(-1)?.body).toMatchObject({ dimensions: 4, user: "u-1" });
    const row = await env.spendRow(requestIdOf(response));
    expect(row).toMatchObject({ call_type: "aembedding", prompt_tokens: 6 });
  });

  it("passes base64 through when the client asks for it", async () => {
    const created = await client.embeddings.create({
      model: "embed-small",
      input: "hello",
      encoding_format: "base64",
    });
    const encoded = created.data[0]?.embedding as unknown as string;
    expect(typeof encoded).toBe("string");
    const bytes = Buffer.from(encoded, "base64");
    const floats = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    expect([...floats]).toEqual(fakeEmbedding("hello"));
  });

  it("embeds token ids and arrays of token ids (no text for the guardrails)", async () => {
    const one = await client.embeddings.create({
      model: "embed-small",
      input: [1, 2, 3],
      encoding_format: "float",
    });
    expect(one.data.map((d) => d.embedding)).toEqual([fakeEmbedding([1, 2, 3])]);
    const two = await client.embeddings.create({
      model: "embed-small",
      input: [[4111, 1111], [5]],
      encoding_format: "float",
    });
    expect(two.data.map((d) => d.embedding)).toEqual([fakeEmbedding([4111, 1111]), fakeEmbedding([5])]);
    expect(two.usage.prompt_tokens).toBe(3);
  });
});

describe("embeddings refusals", () => {
  it("names the model and says it serves no embeddings for an anthropic deployment (400)", async () => {
    const seen = env.fake.requests.length;
    const error = await rejectionOf(
      client.embeddings.create({ model: "claude", input: "hello" }),
      OpenAI.BadRequestError,
    );
    expect(error.message).toContain("model=claude serves no embeddings");
    expect(error.message).toContain("anthropic");
    expect(error.param).toBe("model");
    expect(env.fake.requests.length).toBe(seen);
  });

  it("answers 400 naming input for an input of mixed shapes", async () => {
    const error = await rejectionOf(
      client.embeddings.create({ model: "embed-small", input: ["a", 1] as unknown as string[] }),
      OpenAI.BadRequestError,
    );
    expect(error.param).toBe("input");
    expect(error.message).toContain("input must be a non-empty string, an array of non-empty strings");
    const missing = await rejectionOf(
      client.embeddings.create({ model: "embed-small" } as unknown as OpenAI.EmbeddingCreateParams),
      OpenAI.BadRequestError,
    );
    expect(missing.message).toContain("input is required");
  });

  it("refuses a card number in the input with the PII block policy (400), upstream untouched", async () => {
    const seen = env.fake.requests.length;
    const error = await rejectionOf(
      client.embeddings.create({ model: "embed-small", input: ["fine", "card 4111 1111 1111 1111"] }),
      OpenAI.BadRequestError,
    );
    expect(error.message).toContain("Blocked PII entity detected: CREDIT_CARD");
    expect(error.headers?.get("x-guardrail-decisions")).toBe("pii=block:CREDIT_CARD");
    expect(env.fake.requests.length).toBe(seen);
  });

  it("refuses embeddings (429 budget_exceeded) once the key's budget was spent on chat completions", async () => {
    const spender = env.gw.clientWith(await env.newKey({ max_budget: 0.15 }));
    // The chat fake answers past max_tokens: ~$0.12 reserved, ~$0.2 spent at $0.001 per token.
    const chat = await spender.chat.completions.create({
      model: "general",
      messages: [{ role: "user", content: "lorem ipsum ".repeat(34) }],
      max_tokens: 1,
    });
    expect(chat.usage?.total_tokens ?? 0).toBeGreaterThan(150);
    const error = await rejectionOf(
      spender.embeddings.create({ model: "embed-small", input: "hello" }),
      OpenAI.RateLimitError,
    );
    expect((error.error as { type?: string }).type).toBe("budget_exceeded");
    expect(error.message).toContain("no call fits");
  });
});
