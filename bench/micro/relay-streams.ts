/**
 * The long upstream streams of `bench/micro/relay-sse.ts`: one answer of `chunks` one-word text deltas in each
 * API's own events, one upstream piece per event (a `Buffer` each), usage reported as each API reports it.
 *
 * - `chat`: `chat.completion.chunk` events with `"usage":null` (as an upstream adds when
 *   `stream_options.include_usage` is asked for), the usage chunk and `[DONE]` (OpenAI API reference, "Streaming");
 * - `responses`: the Responses API's events from `response.created` to `response.completed` with its usage
 *   (OpenAI API reference, "Streaming events");
 * - `messages`: Anthropic's Messages events from `message_start` to `message_stop` (Anthropic API reference,
 *   "Streaming Messages").
 */

/** The streams' formats. */
export type RelayFormat = "chat" | "responses" | "messages";
export const RELAY_FORMATS: readonly RelayFormat[] = ["chat", "responses", "messages"];

const words = "The quick brown fox jumps over the lazy dog while the gateway counts every token".split(" ");
const wordAt = (i: number) => ` ${words[i % words.length]}`;
const event = (name: string, data: object) =>
  Buffer.from(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);

function chatStream(chunks: number): Buffer[] {
  const head = `"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"fake-model"`;
  return [
    ...Array.from({ length: chunks }, (_, i) =>
      Buffer.from(
        `data: {${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(wordAt(i))}},"finish_reason":null}],"usage":null}\n\n`,
      ),
    ),
    Buffer.from(
      `data: {${head},"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":${chunks},"total_tokens":${chunks + 5}}}\n\n`,
    ),
    Buffer.from("data: [DONE]\n\n"),
  ];
}

function responsesStream(chunks: number): Buffer[] {
  let sequence = 0;
  const e = (type: string, data: object) => event(type, { type, sequence_number: sequence++, ...data });
  const text = Array.from({ length: chunks }, (_, i) => wordAt(i)).join("");
  const part = { type: "output_text", text: "", annotations: [] };
  const item = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] };
  const done = { ...item, status: "completed", content: [{ ...part, text }] };
  const shell = {
    id: "resp_1",
    object: "response",
    created_at: 1700000000,
    status: "in_progress",
    model: "fake-model",
    output: [],
    usage: null,
  };
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  return [
    e("response.created", { response: shell }),
    e("response.in_progress", { response: shell }),
    e("response.output_item.added", { output_index: 0, item }),
    e("response.content_part.added", { ...at, part }),
    ...Array.from({ length: chunks }, (_, i) =>
      e("response.output_text.delta", { ...at, delta: wordAt(i), logprobs: [] }),
    ),
    e("response.output_text.done", { ...at, text, logprobs: [] }),
    e("response.content_part.done", { ...at, part: { ...part, text } }),
    e("response.output_item.done", { output_index: 0, item: done }),
    e("response.completed", {
      response: {
        ...shell,
        status: "completed",
        output: [done],
        usage: {
          input_tokens: 5,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: chunks,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: chunks + 5,
        },
      },
    }),
  ];
}

function messagesStream(chunks: number): Buffer[] {
  const e = (type: string, data: object) => event(type, { type, ...data });
  return [
    e("message_start", {
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "fake-model",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 5,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
        },
      },
    }),
    e("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    e("ping", {}),
    ...Array.from({ length: chunks }, (_, i) =>
      e("content_block_delta", { index: 0, delta: { type: "text_delta", text: wordAt(i) } }),
    ),
    e("content_block_stop", { index: 0 }),
    e("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: chunks },
    }),
    e("message_stop", {}),
  ];
}

/** The pieces of one stream of `chunks` text deltas in `format` (see the module comment). */
export function relayStream(format: RelayFormat, chunks: number): Buffer[] {
  if (format === "chat") return chatStream(chunks);
  return format === "responses" ? responsesStream(chunks) : messagesStream(chunks);
}
