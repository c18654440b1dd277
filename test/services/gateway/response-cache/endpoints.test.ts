/**
 * The response cache on every other endpoint, through the whole gateway (Redis, Postgres): text completions and
 * embeddings against the embeddings/completions fake; Anthropic Messages and the Responses API translated to the
 * chat fake. Per endpoint, a JSON answer's entry is replayed to a stream as that endpoint's own events, and a
 * finished stream's entry answers a JSON request; the Responses API caches only `store: false`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../../../fixtures/anthropic-messages.js";
import {
  type FakeEmbeddingsCompletions,
  startFakeEmbeddingsCompletions,
} from "../../../fixtures/openai-embeddings-completions.js";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../fixtures/openai-responses.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, type TestGateway } from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { deleteKeys, inspector, uniquePrefix } from "../../../helpers/redis.js";
import { sseData } from "../../../helpers/sse.js";
import { newKey, PRICED, post, startCachedGateway } from "./harness.js";

let chatFake: FakeUpstream;
let fake: FakeEmbeddingsCompletions;
let responsesFake: FakeResponsesUpstream;
let anthropic: FakeAnthropic;
let db: TestDatabase;
let prefix: string;
let gw: TestGateway;

beforeAll(async () => {
  chatFake = await startFakeUpstream();
  fake = await startFakeEmbeddingsCompletions();
  responsesFake = await startFakeResponsesUpstream();
  anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" });
  db = await createTestDatabase();
  prefix = uniquePrefix("response-cache-endpoints");
  gw = await startCachedGateway(chatFake, {
    databaseUrl: db.url,
    prefix,
    moreModels: [
      deployment("embed", fake.url, PRICED),
      deployment("instruct", fake.url, PRICED),
      deployment("claude", anthropic.url, `${PRICED}      api_key: sk-ant-upstream\n`).replace(
        "openai/fake-model",
        "anthropic/claude-haiku-4-5",
      ),
      deployment(
        "native",
        responsesFake.url,
        `${PRICED}    model_info:\n      supported_endpoints: ["/v1/chat/completions", "/v1/responses"]\n`,
      ),
    ].join("\n"),
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([chatFake?.close(), fake?.close(), responsesFake?.close(), anthropic?.close()]);
  await db?.drop();
  await deleteKeys(prefix);
});

let counter = 0;
const fresh = (what: string) => `${what} ${++counter} ${prefix}`;
// biome-ignore lint/suspicious/noExplicitAny: API answers, asserted field by field
const json = async (res: Response): Promise<any> => res.json();
/** The `event:` names of a whole SSE body, in order. */
const eventNames = (text: string) => [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
const cost = (res: Response) => res.headers.get("x-litellm-response-cost");

/** Waits until the key `token` has `count` entries in Redis (a stream's entry is written after it ended). */
async function entries(token: string, count: number): Promise<void> {
  const redis = inspector();
  try {
    await expect.poll(async () => (await redis.keys(`${prefix}rc:*:key:${token}:*`)).length).toBe(count);
  } finally {
    redis.disconnect();
  }
}

describe("completions", () => {
  it("replays a JSON entry as text_completion chunks with usage and [DONE]; a stream's entry answers JSON", async () => {
    const { key, token } = await newKey(gw);
    const prompt = fresh("say");
    const body = { model: "instruct", prompt };
    const stored = await json(await post(gw, key, "/v1/completions", body));
    const seen = fake.requests.length;
    const streamed = await post(gw, key, "/v1/completions", {
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(cost(streamed)).toBe("0");
    const data = sseData(await streamed.text());
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.text ?? "").join("")).toBe(stored.choices[0].text);
    expect(chunks.at(-1).usage).toEqual(stored.usage);

    const other = fresh("stream");
    await (await post(gw, key, "/v1/completions", { model: "instruct", prompt: other, stream: true })).text();
    await entries(token, 2);
    const hit = await post(gw, key, "/v1/completions", { model: "instruct", prompt: other });
    expect(cost(hit)).toBe("0");
    expect((await json(hit)).object).toBe("text_completion");
    expect(fake.requests.length).toBe(seen + 1);
  });
});

describe("embeddings", () => {
  it("answers a repeated input from the cache", async () => {
    const { key } = await newKey(gw);
    const body = { model: "embed", input: fresh("embed me") };
    const first = await json(await post(gw, key, "/v1/embeddings", body));
    const seen = fake.requests.length;
    const hit = await post(gw, key, "/v1/embeddings", body);
    expect(cost(hit)).toBe("0");
    expect(await json(hit)).toEqual(first);
    expect(fake.requests.length).toBe(seen);
  });
});

describe("Anthropic Messages", () => {
  const ask = (content: string, extra: Record<string, unknown> = {}) => ({
    model: "general",
    max_tokens: 200,
    messages: [{ role: "user", content }],
    ...extra,
  });

  it("replays a JSON entry as message_start … message_stop; a stream's entry answers JSON", async () => {
    const { key, token } = await newKey(gw);
    const question = fresh("hello");
    const stored = await json(await post(gw, key, "/v1/messages", ask(question)));
    expect(stored.type).toBe("message");
    const before = chatFake.completions;
    const streamed = await post(gw, key, "/v1/messages", ask(question, { stream: true }));
    expect(cost(streamed)).toBe("0");
    const text = await streamed.text();
    expect(eventNames(text)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const deltas = sseData(text)
      .map((d) => JSON.parse(d))
      .filter((e) => e.type === "content_block_delta");
    expect(deltas.map((e) => e.delta.text).join("")).toBe(stored.content[0].text);

    const other = fresh("streamed");
    await (await post(gw, key, "/v1/messages", ask(other, { stream: true }))).text();
    await entries(token, 2);
    const hit = await post(gw, key, "/v1/messages", ask(other));
    expect(cost(hit)).toBe("0");
    const message = await json(hit);
    expect(message.type).toBe("message");
    expect(message.content[0].text).toContain(other);
    expect(chatFake.completions).toBe(before + 1);
  });
});

describe("Anthropic Messages, native", () => {
  it("stores a native stream assembled into its Message, which a JSON request then hits", async () => {
    const { key, token } = await newKey(gw);
    const body = {
      model: "claude",
      max_tokens: 64,
      messages: [{ role: "user", content: fresh("native hi") }],
    };
    const streamed = await (await post(gw, key, "/v1/messages", { ...body, stream: true })).text();
    const text = sseData(streamed)
      .map((d) => JSON.parse(d))
      .filter((e) => e.type === "content_block_delta")
      .map((e) => e.delta.text ?? "")
      .join("");
    expect(text).not.toBe("");
    await entries(token, 1);
    const seen = anthropic.requests.length;
    const hit = await post(gw, key, "/v1/messages", body);
    expect(cost(hit)).toBe("0");
    const message = await json(hit);
    expect(message.type).toBe("message");
    expect(message.content[0].text).toBe(text);
    expect(anthropic.requests.length).toBe(seen);
  });
});

describe("Responses", () => {
  it("caches store: false only; replays as Responses events ending in response.completed", async () => {
    const { key, token } = await newKey(gw);
    const input = fresh("respond");
    const stored = await post(gw, key, "/v1/responses", { model: "general", input });
    expect(stored.headers.get("x-litellm-cache-key")).toBeNull();

    const first = await json(await post(gw, key, "/v1/responses", { model: "general", input, store: false }));
    const before = chatFake.completions;
    const streamed = await post(gw, key, "/v1/responses", {
      model: "general",
      input,
      store: false,
      stream: true,
    });
    expect(cost(streamed)).toBe("0");
    const text = await streamed.text();
    const names = eventNames(text);
    expect(names[0]).toBe("response.created");
    expect(names.at(-1)).toBe("response.completed");
    const events = sseData(text).map((d) => JSON.parse(d));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const done = events.find((e) => e.type === "response.output_text.done");
    expect(done.text).toBe(first.output[0].content[0].text);
    expect(events.at(-1).response.usage).toEqual(first.usage);

    const other = fresh("streamed");
    await (
      await post(gw, key, "/v1/responses", { model: "general", input: other, store: false, stream: true })
    ).text();
    await entries(token, 2);
    const hit = await post(gw, key, "/v1/responses", { model: "general", input: other, store: false });
    expect(cost(hit)).toBe("0");
    expect((await json(hit)).status).toBe("completed");
    expect(chatFake.completions).toBe(before + 1);
  });

  it("stores a native stream's completed response, which a JSON request then hits", async () => {
    const { key, token } = await newKey(gw);
    const input = fresh("native");
    const body = { model: "native", input, store: false };
    const streamed = await (await post(gw, key, "/v1/responses", { ...body, stream: true })).text();
    const completed = sseData(streamed)
      .map((d) => JSON.parse(d))
      .find((e) => e.type === "response.completed");
    await entries(token, 1);
    const seen = responsesFake.requests.length;
    const hit = await post(gw, key, "/v1/responses", body);
    expect(cost(hit)).toBe("0");
    expect((await json(hit)).output).toEqual(completed.response.output);
    expect(responsesFake.requests.length).toBe(seen);
  });
});
