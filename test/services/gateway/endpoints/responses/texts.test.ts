/**
 * The guardrails' view of a Responses request and answer: every text a model reads, in its scope, and nothing
 * that is an identifier or a setting; masking writes back into the body.
 */
import { describe, expect, it } from "vitest";
import type { Deployment } from "../../../../../services/gateway/src/config/types.js";
import {
  responseOutputTexts,
  responsesRequestTexts,
} from "../../../../../services/gateway/src/endpoints/responses/texts.js";
import { servesNatively } from "../../../../../services/gateway/src/pipeline/steps/native-api.js";
import type { CallContext } from "../../../../../services/gateway/src/pipeline/types.js";
import { providers } from "../../../../../services/gateway/src/providers/index.js";

describe("responsesRequestTexts", () => {
  it("reads instructions, item texts, image URLs, call arguments and outputs, tool descriptions, metadata and unknown fields", () => {
    const body: Record<string, unknown> = {
      model: "general",
      instructions: "You are terse.",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "mail bob@example.com" },
            { type: "input_image", image_url: "https://x/y.png" },
          ],
        },
        { type: "function_call", call_id: "call_1", name: "lookup", arguments: '{"q":"bob"}' },
        { type: "function_call_output", call_id: "call_1", output: "bob lives in Paris" },
      ],
      tools: [
        {
          type: "function",
          name: "lookup",
          description: "Looks people up",
          parameters: { type: "object" },
          strict: true,
        },
      ],
      metadata: { team: "a" },
      previous_response_id: "resp_1",
      custom_note: "unknown text",
    };
    const slots = responsesRequestTexts(body);
    expect(slots.map((s) => [s.scope, s.text])).toEqual([
      ["system", "You are terse."],
      ["user", "mail bob@example.com"],
      ["user", "https://x/y.png"],
      ["tool_call", '{"q":"bob"}'],
      ["tool", "bob lives in Paris"],
      ["request", "Looks people up"],
      ["request", "a"],
      ["request", "unknown text"],
    ]);
    slots[1]!.set("mail <EMAIL_ADDRESS>");
    expect((body.input as Array<{ content: Array<{ text: string }> }>)[0]!.content[0]!.text).toBe(
      "mail <EMAIL_ADDRESS>",
    );
  });

  it("reads a string input as one user text", () => {
    expect(responsesRequestTexts({ model: "m", input: "hi" }).map((s) => [s.scope, s.text])).toEqual([
      ["user", "hi"],
    ]);
  });
});

describe("responseOutputTexts", () => {
  it("reads output_text parts and function call arguments", () => {
    const response = {
      output: [
        {
          id: "msg_1",
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "hello", annotations: [] }],
        },
        { id: "fc_1", type: "function_call", call_id: "c", name: "f", arguments: "{}", status: "completed" },
      ],
    };
    expect(responseOutputTexts(response).map((s) => s.text)).toEqual(["hello", "{}"]);
  });
});

describe("who serves the Responses API natively", () => {
  const base = (over: Partial<Deployment>): Deployment => ({
    id: "d",
    modelName: "m",
    provider: "openai",
    upstreamModel: "gpt-4o",
    apiBase: "https://api.openai.com/v1",
    tags: [],
    created: 0,
    ...over,
  });
  const serves = (d: Deployment) => providers[d.provider].adapter.serves(d, "responses");

  it("OpenAI at its default base; a custom api_base only with model_info.supported_endpoints", () => {
    expect(serves(base({}))).toBe(true);
    expect(serves(base({ apiBase: "http://vllm:8000/v1" }))).toBe(false);
    expect(serves(base({ apiBase: "http://vllm:8000/v1", supportedEndpoints: ["/v1/responses"] }))).toBe(
      true,
    );
    expect(serves(base({ supportedEndpoints: ["/v1/chat/completions"] }))).toBe(false);
    expect(serves(base({ provider: "anthropic", apiBase: "https://api.anthropic.com/v1" }))).toBe(false);
  });

  it("an alias is native only when every deployment it may route to is", () => {
    const native = base({});
    const chatOnly = base({ apiBase: "http://vllm:8000/v1" });
    // The route plans the resolve step makes: "a" falls back to "b"; "nosuch" has no deployment.
    const plans: Record<string, Deployment[]> = { a: [native, chatOnly], c: [native], nosuch: [] };
    const call = (alias: string) =>
      ({ deployments: [], route: { aliases: [alias], deployments: plans[alias] } }) as unknown as CallContext;
    expect(servesNatively(call("c"), "responses")).toBe(true);
    expect(servesNatively(call("a"), "responses")).toBe(false);
    expect(servesNatively(call("nosuch"), "responses")).toBe(false);
  });
});
