/**
 * Chat completions ↔ Anthropic Messages, both ways: requests (checked against the Messages fake's documented
 * validation), answers and streamed events (checked against OpenAI's published chat schemas).
 */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_OUTPUT_TOKENS } from "../../../../../services/gateway/src/cost/reservation.js";
import { GatewayError } from "../../../../../services/gateway/src/errors/gateway-error.js";
import { toAnthropicRequest } from "../../../../../services/gateway/src/providers/anthropic/request.js";
import {
  anthropicErrorMessage,
  finishReason,
  toChatCompletion,
} from "../../../../../services/gateway/src/providers/anthropic/response.js";
import {
  AnthropicStreamError,
  ChatChunkStream,
} from "../../../../../services/gateway/src/providers/anthropic/stream.js";
import { validateMessagesRequest } from "../../../../fixtures/anthropic-messages.js";
import { openAISchemaErrors } from "../../../../helpers/openapi.js";

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describe("chat request → Messages request", () => {
  it("moves system and developer messages to system, keeps turns, and sets max_tokens from the chat caps", () => {
    const out = toAnthropicRequest({
      model: "claude-sonnet-4-5",
      max_completion_tokens: 300,
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      stop: "END",
      user: "alice",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
        { role: "user", content: "Hi" },
      ],
    });
    expect(out).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 300,
      system: [
        { type: "text", text: "Be brief." },
        { type: "text", text: "Answer in French." },
      ],
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ["END"],
      metadata: { user_id: "alice" },
      stream: true,
    });
    expect(() => validateMessagesRequest(out)).not.toThrow();
    expect(
      toAnthropicRequest({ model: "m", max_tokens: 50, messages: [{ role: "user", content: "x" }] })
        .max_tokens,
    ).toBe(50);
    expect(toAnthropicRequest({ model: "m", messages: [{ role: "user", content: "x" }] }).max_tokens).toBe(
      DEFAULT_MAX_OUTPUT_TOKENS,
    );
    // The deployment's model_info.max_output_tokens, when it has one, instead of the gateway's default.
    expect(
      toAnthropicRequest({ model: "m", messages: [{ role: "user", content: "x" }] }, 64_000).max_tokens,
    ).toBe(64_000);
  });

  it("turns image_url parts into base64 and url image blocks", () => {
    const out = toAnthropicRequest({
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.jpg", detail: "high" } },
          ],
        },
      ],
    });
    expect(out.messages[0]?.content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
    ]);
    expect(() => validateMessagesRequest(out)).not.toThrow();
  });

  it("maps tools and tool_choice, assistant tool_calls to tool_use, and merges tool results into one user turn", () => {
    const out = toAnthropicRequest({
      model: "m",
      tools: [weatherTool],
      tool_choice: "required",
      parallel_tool_calls: false,
      messages: [
        { role: "user", content: "Weather in Paris and Rome?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "toolu_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
            },
            {
              id: "toolu_2",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Rome"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
        { role: "tool", tool_call_id: "toolu_2", content: [{ type: "text", text: "rain" }] },
        { role: "user", content: "Thanks; summarise." },
      ],
    });
    expect(out.tools).toEqual([
      {
        name: "get_weather",
        description: "Weather for a city",
        input_schema: weatherTool.function.parameters,
      },
    ]);
    expect(out.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(out.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "sunny" }] },
          { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "rain" }] },
          { type: "text", text: "Thanks; summarise." },
        ],
      },
    ]);
    expect(() => validateMessagesRequest(out)).not.toThrow();
    const choice = (tool_choice: unknown) =>
      toAnthropicRequest({
        model: "m",
        tools: [weatherTool],
        tool_choice,
        messages: [{ role: "user", content: "x" }],
      }).tool_choice;
    expect(choice("auto")).toEqual({ type: "auto" });
    expect(choice(undefined)).toEqual({ type: "auto" });
    expect(choice("none")).toEqual({ type: "none" });
    expect(choice({ type: "function", function: { name: "get_weather" } })).toEqual({
      type: "tool",
      name: "get_weather",
    });
  });

  it("passes cache_control on content parts, messages (system, user, tool) and tools to Anthropic, as LiteLLM does", () => {
    const ephemeral = { type: "ephemeral" };
    const hour = { type: "ephemeral", ttl: "1h" };
    const request = toAnthropicRequest({
      model: "claude-sonnet-4-5",
      messages: [
        {
          role: "system",
          content: [
            { type: "text", text: "Rules." },
            { type: "text", text: "A long document.", cache_control: hour },
          ],
        },
        { role: "developer", content: "Be brief.", cache_control: ephemeral },
        { role: "user", content: [{ type: "text", text: "Question?", cache_control: ephemeral }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "t1", type: "function", function: { name: "get_weather", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "t1", content: "sunny", cache_control: ephemeral },
        { role: "user", content: "And tomorrow?", cache_control: ephemeral },
      ],
      tools: [{ ...weatherTool, cache_control: hour }],
    });
    expect(request.system).toEqual([
      { type: "text", text: "Rules." },
      { type: "text", text: "A long document.", cache_control: hour },
      { type: "text", text: "Be brief.", cache_control: ephemeral },
    ]);
    expect(request.messages[0]?.content).toEqual([
      { type: "text", text: "Question?", cache_control: ephemeral },
    ]);
    expect(request.messages[2]?.content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "t1",
        content: [{ type: "text", text: "sunny" }],
        cache_control: ephemeral,
      },
      { type: "text", text: "And tomorrow?", cache_control: ephemeral },
    ]);
    expect(request.tools?.[0]?.cache_control).toEqual(hour);
    // Each breakpoint is one Anthropic accepts; six of them in one request are two too many (Anthropic's limit is
    // 4: the client's to respect, the gateway passes what it sent).
    expect(() => validateMessagesRequest(request)).toThrow(
      "A maximum of 4 blocks with cache_control may be provided. Found 6.",
    );
  });

  it("refuses what Messages cannot express with a 400 naming the field", () => {
    const refused = (body: Record<string, unknown>) => {
      try {
        toAnthropicRequest({ model: "m", ...body });
      } catch (error) {
        expect(error).toBeInstanceOf(GatewayError);
        return { status: (error as GatewayError).status, param: (error as GatewayError).param };
      }
      return undefined;
    };
    expect(refused({ n: 2, messages: [{ role: "user", content: "x" }] })).toEqual({
      status: 400,
      param: "n",
    });
    expect(
      refused({
        messages: [
          { role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] },
        ],
      }),
    ).toEqual({ status: 400, param: "messages[0].content[0]" });
    expect(
      refused({
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x/y.png" } }] }],
      }),
    ).toEqual({ status: 400, param: "messages[0].content[0]" });
    expect(refused({ messages: [{ role: "system", content: "only a system prompt" }] })).toEqual({
      status: 400,
      param: "messages",
    });
    expect(
      refused({
        messages: [
          { role: "user", content: "x" },
          {
            role: "assistant",
            tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "{oops" } }],
          },
        ],
      }),
    ).toEqual({ status: 400, param: "messages[1].tool_calls[0]" });
  });
});

describe("Messages answer → chat completion", () => {
  it("joins text blocks, turns tool_use into tool_calls, and counts cache tokens as prompt tokens", () => {
    const completion = toChatCompletion(
      {
        id: "msg_1",
        model: "claude-sonnet-4-5",
        content: [
          { type: "thinking", text: "hidden" },
          { type: "text", text: "Let me check. " },
          { type: "text", text: "One moment." },
          { type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Paris" } },
        ],
        stop_reason: "tool_use",
        usage: {
          input_tokens: 10,
          output_tokens: 7,
          cache_creation_input_tokens: 3,
          cache_read_input_tokens: 20,
        },
      },
      1_700_000_000,
    );
    expect(completion).toEqual({
      id: "msg_1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "claude-sonnet-4-5",
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: "Let me check. One moment.",
            refusal: null,
            tool_calls: [
              {
                id: "toolu_9",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Paris"}' },
              },
            ],
          },
        },
      ],
      // Cache reads also as OpenAI's cached_tokens; writes and reads in LiteLLM's names too.
      usage: {
        prompt_tokens: 33,
        completion_tokens: 7,
        total_tokens: 40,
        prompt_tokens_details: { cached_tokens: 20 },
        cache_creation_input_tokens: 3,
        cache_read_input_tokens: 20,
      },
    });
    expect(openAISchemaErrors("CreateChatCompletionResponse", completion)).toEqual([]);
  });

  it("maps every stop_reason", () => {
    expect(finishReason("end_turn")).toBe("stop");
    expect(finishReason("stop_sequence")).toBe("stop");
    expect(finishReason("pause_turn")).toBe("stop");
    expect(finishReason(null)).toBe("stop");
    expect(finishReason("max_tokens")).toBe("length");
    expect(finishReason("tool_use")).toBe("tool_calls");
    expect(finishReason("refusal")).toBe("content_filter");
  });

  it("reads Anthropic's error body with its type, and nothing else", () => {
    expect(
      anthropicErrorMessage('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    ).toBe("Overloaded (overloaded_error)");
    expect(anthropicErrorMessage('{"error":{"message":"openai style"}}')).toBeUndefined();
    expect(anthropicErrorMessage("<html>")).toBeUndefined();
  });
});

const event = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** Runs SSE text (in pieces of `size` bytes, to cross event boundaries) through the translator. */
async function translate(sse: string, includeUsage: boolean, size = 7): Promise<string[]> {
  const pieces: Buffer[] = [];
  for (let i = 0; i < sse.length; i += size) pieces.push(Buffer.from(sse.slice(i, i + size)));
  const out = Readable.from(pieces).pipe(new ChatChunkStream(includeUsage, 1_700_000_000));
  let text = "";
  for await (const piece of out) text += String(piece);
  return text
    .split("\n\n")
    .filter((e) => e !== "")
    .map((e) => e.replace(/^data: /, ""));
}

const toolStream = [
  event("message_start", {
    message: {
      id: "msg_s",
      model: "claude-haiku-4-5",
      usage: { input_tokens: 12, cache_read_input_tokens: 4, output_tokens: 1 },
    },
  }),
  event("ping", {}),
  event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Checking" } }),
  event("content_block_stop", { index: 0 }),
  event("content_block_start", {
    index: 1,
    content_block: { type: "tool_use", id: "toolu_s", name: "get_weather", input: {} },
  }),
  event("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: '{"city":' } }),
  event("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: '"Paris"}' } }),
  event("content_block_stop", { index: 1 }),
  event("message_delta", {
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 15 },
  }),
  event("message_stop", {}),
].join("");

describe("Messages stream → chat chunks", () => {
  it("writes valid chunks: role, text, tool call with argument pieces, finish_reason, usage, [DONE]", async () => {
    const payloads = await translate(toolStream, true);
    expect(payloads.at(-1)).toBe("[DONE]");
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p));
    for (const chunk of chunks)
      expect(openAISchemaErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: "assistant", content: "" },
      { content: "Checking" },
      {
        tool_calls: [
          { index: 0, id: "toolu_s", type: "function", function: { name: "get_weather", arguments: "" } },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      {},
      undefined,
    ]);
    expect(chunks[5].choices[0].finish_reason).toBe("tool_calls");
    expect(chunks[6]).toMatchObject({
      id: "msg_s",
      model: "claude-haiku-4-5",
      object: "chat.completion.chunk",
      choices: [],
      usage: { prompt_tokens: 16, completion_tokens: 15, total_tokens: 31 },
    });
  });

  it("leaves the usage chunk out when usage was not asked for", async () => {
    const payloads = await translate(toolStream, false, 1000);
    expect(payloads.some((p) => p.includes('"usage"'))).toBe(false);
    expect(payloads.at(-1)).toBe("[DONE]");
  });

  it("fails the stream with Anthropic's message on an error event", async () => {
    const broken = [
      event("message_start", { message: { id: "msg_e", model: "m", usage: { input_tokens: 1 } } }),
      event("error", { error: { type: "overloaded_error", message: "Overloaded" } }),
    ].join("");
    const failed = await translate(broken, true).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(AnthropicStreamError);
    expect((failed as Error).message).toContain("Overloaded (overloaded_error)");
  });
});
