/**
 * `POST /v1/completions` through the assembled gateway with a virtual key, called with the official `openai`
 * client: a non-streamed and a streamed completion work, answers are OpenAI's `CreateCompletionResponse`
 * (streamed chunks share that shape), the spend row is an `atext_completion` at the model's list price, the
 * requests counter counts it; a stream from an upstream that ignores `max_tokens` is cut at the reservation;
 * the output guard masks an answer's text, streamed or not; a provider without the API is refused.
 */
import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";
import { rejectionOf } from "../../../../helpers/rejection.js";
import { type OpenAIApisGateway, startOpenAIApisGateway } from "../openai-apis-gateway.js";

/** Output-only PII masking: the answer's text is what the guard reads. */
const POLICY =
  "guardrails:\n  pii:\n    mode: enforce\n    scope: output\n    entities: {EMAIL_ADDRESS: MASK}\n";
/** gpt-3.5-turbo-instruct's list price, USD per token. */
const INPUT = 1.5 / 1e6;
const OUTPUT = 2 / 1e6;

let env: OpenAIApisGateway;
let client: OpenAI;

beforeAll(async () => {
  env = await startOpenAIApisGateway(POLICY);
  client = env.gw.clientWith(await env.newKey({ max_budget: 10 }));
});
afterAll(async () => {
  await env?.close();
});

describe("text completions with the openai SDK", () => {
  it("answers a completion that validates as CreateCompletionResponse; books an atext_completion", async () => {
    const before = await env.requests("instruct", "200");
    const { data, response } = await client.completions
      .create({ model: "instruct", prompt: "Say this is a test", max_tokens: 3, suffix: "!", echo: false })
      .withResponse();
    expect(openAISchemaErrors("CreateCompletionResponse", data)).toEqual([]);
    expect(data.object).toBe("text_completion");
    expect(data.choices[0]?.text).toBe(" word1 word2 word3");
    expect(data.choices[0]?.finish_reason).toBe("length");
    expect(env.fake.requests.at(-1)?.body).toMatchObject({
      model: "gpt-3.5-turbo-instruct",
      max_tokens: 3,
      suffix: "!",
      echo: false,
    });
    const row = await env.spendRow(response.headers.get("x-request-id") ?? "");
    expect(row).toMatchObject({ call_type: "atext_completion", prompt_tokens: 5, completion_tokens: 3 });
    expect(row.spend).toBeCloseTo(5 * INPUT + 3 * OUTPUT, 12);
    expect(await env.requests("instruct", "200")).toBe(before + 1);
  });

  it("streams text_completion chunks, each a CreateCompletionResponse, with usage when asked", async () => {
    const stream = await client.completions.create({
      model: "instruct",
      prompt: ["Once upon a time"],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    const finishes: string[] = [];
    for await (const chunk of stream) {
      if (chunk.choices.length > 0) {
        expect(openAISchemaErrors("CreateCompletionResponse", { ...chunk, choices: [] })).toEqual([]);
      }
      for (const choice of chunk.choices) {
        text += choice.text;
        if (choice.finish_reason) finishes.push(choice.finish_reason);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(" word1 word2 word3 word4 word5");
    expect(finishes).toEqual(["stop"]);
    expect(usage).toEqual({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
    expect(env.fake.requests.at(-1)?.body.stream_options).toEqual({ include_usage: true });
  });

  it("asks the upstream for usage on a stream and hides it from a client that did not ask", async () => {
    const stream = await client.completions.create({ model: "instruct", prompt: "hi", stream: true });
    const chunks: OpenAI.Completion[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.some((c) => c.usage !== undefined && c.usage !== null)).toBe(false);
    expect(env.fake.requests.at(-1)?.body.stream_options).toEqual({ include_usage: true });
  });

  it("cuts a stream from an upstream that ignores max_tokens at the reservation (finish_reason length)", async () => {
    env.fake.settings.ignoreMaxTokens = true;
    env.fake.settings.completionWords = 60;
    try {
      const stream = await client.completions.create({
        model: "instruct",
        prompt: "Count",
        max_tokens: 8,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      const finishes: string[] = [];
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          text += choice.text;
          if (choice.finish_reason) finishes.push(choice.finish_reason);
        }
        if (chunk.usage) usage = chunk.usage;
      }
      expect(finishes).toEqual(["length"]);
      expect(text.length).toBeGreaterThan(0);
      expect(countTokens(text)).toBeLessThanOrEqual(8);
      expect(text.length).toBeLessThan(" word1".length * 60);
      expect(usage?.completion_tokens).toBeLessThanOrEqual(8);
    } finally {
      env.fake.settings.ignoreMaxTokens = false;
      env.fake.settings.completionWords = 5;
    }
  });

  it("masks an e-mail address in a non-streamed answer's text (output guard)", async () => {
    const response = await client.completions
      .create({ model: "instruct", prompt: "Write to jane.doe@example.org", echo: true, max_tokens: 1 })
      .asResponse();
    expect(response.headers.get("x-guardrail-decisions")).toBe("pii=mask:EMAIL_ADDRESS");
    const answer = (await response.json()) as OpenAI.Completion;
    expect(answer.choices[0]?.text).toBe("Write to <EMAIL_ADDRESS> word1");
    // The input was not guarded (output scope only): the upstream got the address.
    expect(env.fake.requests.at(-1)?.body.prompt).toBe("Write to jane.doe@example.org");
  });

  it("masks an e-mail address in a streamed answer's text (stream output guard, buffer mode)", async () => {
    const stream = await client.completions.create({
      model: "instruct",
      prompt: "Write to jane.doe@example.org",
      echo: true,
      // The echoed prompt is output too: the reservation must cover it.
      max_tokens: 20,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) for (const choice of chunk.choices) text += choice.text;
    expect(text).toBe("Write to <EMAIL_ADDRESS> word1 word2 word3 word4 word5");
  });
});

describe("text completions refusals", () => {
  it("names the model and says it serves no text completions for an anthropic deployment (400)", async () => {
    const error = await rejectionOf(
      client.completions.create({ model: "claude", prompt: "hello" }),
      OpenAI.BadRequestError,
    );
    expect(error.message).toContain("model=claude serves no text completions");
    expect(error.param).toBe("model");
  });

  it("answers 400 naming prompt when it is missing", async () => {
    const error = await rejectionOf(
      client.completions.create({
        model: "instruct",
      } as unknown as OpenAI.CompletionCreateParamsNonStreaming),
      OpenAI.BadRequestError,
    );
    expect(error.param).toBe("prompt");
    expect(error.message).toContain("prompt is required");
  });
});
