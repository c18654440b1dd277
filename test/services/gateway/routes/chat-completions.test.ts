import { APIError } from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { rejectionOf } from "../../../helpers/rejection.js";

let upstream: FakeUpstream;
let backup: FakeUpstream;
let gw: TestGateway;

const tools = [
  {
    type: "function" as const,
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { location: { type: "string" } } },
    },
  },
];
const ask = (content: string) => [{ role: "user" as const, content }];

/** The APIError a call fails with (fails the test if it succeeds). */
const failure = (call: Promise<unknown>) => rejectionOf(call, APIError);

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}
const errorBody = async (res: Response) => (await res.json()) as ErrorBody;

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey: "sk-upstream-secret-abcdef" });
  backup = await startFakeUpstream();
  process.env.TEST_UPSTREAM_KEY = "sk-upstream-secret-abcdef";
  process.env.TEST_WRONG_KEY = "sk-wrong-secret-123456";
  gw = await startTestGateway(
    [
      "model_list:",
      deployment("general", upstream.url, "      api_key: os.environ/TEST_UPSTREAM_KEY\n"),
      deployment("wrong-key", upstream.url, "      api_key: os.environ/TEST_WRONG_KEY\n"),
      // nothing listens on port 9 (discard): the connection is refused
      deployment("down", "http://127.0.0.1:9/v1"),
      deployment("backup", backup.url),
      deployment("slow", upstream.url, "      api_key: os.environ/TEST_UPSTREAM_KEY\n      timeout: 0.3\n"),
      "litellm_settings:",
      "  num_retries: 1",
      "  fallbacks:",
      "    - down: [backup]",
    ].join("\n"),
    { GATEWAY_MAX_REQUEST_SIZE_MB: "0.01" },
  );
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
  await backup.close();
});
afterEach(() => {
  upstream.requests.length = 0;
  backup.requests.length = 0;
});

describe("POST /v1/chat/completions through the official openai client", () => {
  it("answers a completion with the upstream's reply, usage and a cost header", async () => {
    const { data, response } = await gw.client.chat.completions
      .create({ model: "general", messages: ask("hello"), temperature: 0.2, max_tokens: 50 })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("You said: hello");
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-litellm-response-cost")).toBe("0");
    const sent = upstream.requests[0]?.body;
    expect(sent).toMatchObject({ model: "fake-model", temperature: 0.2, max_tokens: 50 });
  });

  it("streams: the first chunk reaches the client before the upstream has sent its last", async () => {
    const hold = upstream.holdNextStream();
    const stream = await gw.client.chat.completions.create({
      model: "general",
      messages: ask("a b c"),
      stream: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    await hold.firstChunkSent;
    expect(first.value?.choices[0]?.delta.role).toBe("assistant");
    expect(upstream.requests[0]?.completed).toBe(false); // the upstream is still holding the rest
    hold.release();
    let text = "";
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
      text += r.value.choices[0]?.delta.content ?? "";
      expect(Object.keys(r.value)).not.toContain("usage"); // the client did not ask for usage
    }
    expect(text).toBe("You said: a b c");
    // …but the gateway asked the upstream for it, to cost the stream
    expect(upstream.requests[0]?.body?.stream_options).toEqual({ include_usage: true });
  });

  it("passes the usage chunk through when the client asks with stream_options.include_usage", async () => {
    const stream = await gw.client.chat.completions.create({
      model: "general",
      messages: ask("count me"),
      stream: true,
      stream_options: { include_usage: true },
    });
    const usages = [];
    for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage);
    expect(usages).toHaveLength(1);
    expect(usages[0]?.prompt_tokens).toBeGreaterThan(0);
  });

  it("returns tool calls, whole and streamed", async () => {
    const whole = await gw.client.chat.completions.create({
      model: "general",
      messages: ask("weather?"),
      tools,
      tool_choice: "auto",
    });
    expect(whole.choices[0]?.finish_reason).toBe("tool_calls");
    expect(
      JSON.parse(
        whole.choices[0]?.message.tool_calls?.find((c) => c.type === "function")?.function.arguments ?? "",
      ),
    ).toEqual({
      location: "Paris",
    });
    expect(upstream.requests[0]?.body?.tools).toEqual(tools);

    const stream = await gw.client.chat.completions.create({
      model: "general",
      messages: ask("weather?"),
      tools,
      stream: true,
    });
    let name = "";
    let args = "";
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta.tool_calls?.[0];
      name += call?.function?.name ?? "";
      args += call?.function?.arguments ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe("get_weather");
    expect(JSON.parse(args)).toEqual({ location: "Paris" });
    expect(finish).toBe("tool_calls");
  });

  it("refuses an unknown model with a 400 that names it and points to /v1/models", async () => {
    const error = await failure(
      gw.client.chat.completions.create({ model: "no-such-model", messages: ask("x") }),
    );
    expect(error).toMatchObject({ status: 400, param: "model" });
    expect(error.message).toContain("model=no-such-model");
    expect(error.message).toContain("/v1/models");
    expect(upstream.requests).toHaveLength(0);
  });

  it("refuses a missing or wrong key with 401", async () => {
    await expect(
      gw.clientWith("sk-not-a-key").chat.completions.create({ model: "general", messages: ask("x") }),
    ).rejects.toMatchObject({ status: 401 });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "general", messages: ask("x") }),
    });
    expect(res.status).toBe(401);
    expect((await errorBody(res)).error.type).toBe("authentication_error");
    expect(upstream.requests).toHaveLength(0);
  });

  it("answers malformed JSON, wrong types and oversize bodies with OpenAI-shaped 400/413", async () => {
    const post = (body: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
        body,
      });
    const malformed = await post('{"model": "general", "messages": [');
    expect(malformed.status).toBe(400);
    expect((await errorBody(malformed)).error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_json",
    });

    const wrongType = await post(
      JSON.stringify({ model: "general", messages: ask("x"), temperature: "hot" }),
    );
    expect(wrongType.status).toBe(400);
    expect((await errorBody(wrongType)).error).toMatchObject({ param: "temperature" });

    const noRole = await post(JSON.stringify({ model: "general", messages: [{ content: "x" }] }));
    expect((await errorBody(noRole)).error.param).toBe("messages[0].role");

    const oversize = await post(JSON.stringify({ model: "general", messages: ask("x".repeat(20_000)) }));
    expect(oversize.status).toBe(413);
    expect((await errorBody(oversize)).error.message).toContain("GATEWAY_MAX_REQUEST_SIZE_MB");
    expect(upstream.requests).toHaveLength(0);
  });

  it("retries an upstream 500 and answers with the retry's success", async () => {
    upstream.failNext(1, 500);
    const r = await gw.client.chat.completions.create({ model: "general", messages: ask("again") });
    expect(r.choices[0]?.message.content).toBe("You said: again");
    expect(upstream.requests).toHaveLength(2);
  });

  it("gives up after num_retries with a 502 naming the upstream status", async () => {
    upstream.failNext(2, 503);
    const error = await failure(gw.client.chat.completions.create({ model: "general", messages: ask("x") }));
    expect(error).toMatchObject({ status: 502 });
    expect(error.message).toContain("503");
    expect(upstream.requests).toHaveLength(2);
  });

  it("falls back to the next model group when the upstream is down", async () => {
    const r = await gw.client.chat.completions.create({ model: "down", messages: ask("fallback please") });
    expect(r.choices[0]?.message.content).toBe("You said: fallback please");
    expect(backup.requests).toHaveLength(1);
  });

  it("answers 504 when the upstream does not answer within the timeout", async () => {
    upstream.hangNext(2);
    const error = await failure(gw.client.chat.completions.create({ model: "slow", messages: ask("x") }));
    expect(error).toMatchObject({ status: 504 });
    expect(upstream.requests).toHaveLength(2); // one retry, then it gives up
  });

  it("never leaks the provider key when the upstream refuses it", async () => {
    const error = await failure(
      gw.client.chat.completions.create({ model: "wrong-key", messages: ask("x") }),
    );
    expect(error).toMatchObject({ status: 502 });
    expect(JSON.stringify(error.error)).not.toContain("sk-wrong-secret-123456");
    expect(JSON.stringify(error.error)).not.toContain("sk-upstream-secret");
  });

  it("aborts the upstream request when the client goes away mid-stream", async () => {
    const hold = upstream.holdNextStream();
    const controller = new AbortController();
    const stream = await gw.client.chat.completions.create(
      { model: "general", messages: ask("bye"), stream: true },
      { signal: controller.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    await hold.firstChunkSent;
    controller.abort();
    await expect.poll(() => upstream.requests[0]?.aborted, { timeout: 5000 }).toBe(true);
    hold.release();
  });

  it("counts requests, tokens and failures in /metrics under LiteLLM's names", async () => {
    await gw.client.chat.completions.create({ model: "general", messages: ask("metrics") });
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const requests = text.match(
      /^litellm_proxy_total_requests_metric_total\{[^}]*requested_model="general",status_code="200"\} (\d+)/m,
    );
    expect(Number(requests?.[1])).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^litellm_proxy_failed_requests_metric_total\{[^}]*exception_status="400"/m);
    expect(text).toMatch(/^litellm_total_tokens_metric_total\{[^}]*model="openai\/fake-model"[^}]*\} \d+/m);
    expect(text).toMatch(/^litellm_llm_api_time_to_first_token_metric_count\{/m);
    expect(text).toMatch(/^litellm_overhead_latency_metric_bucket\{/m);
  });
});
