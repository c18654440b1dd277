/**
 * Anthropic's streamed Messages events → chat completion chunks, as server-sent events ending in
 * `data: [DONE]` (Anthropic API reference "Streaming Messages"; OpenAI API reference "The chat completion
 * chunk object"), so the gateway's chat relay (streaming/relay-sse.ts) and its output meter read them as
 * they read any chat upstream:
 * - `message_start` → the first chunk (`delta: {role: "assistant", content: ""}`); its usage gives the input
 *   tokens;
 * - `content_block_start` of a `tool_use` → a `delta.tool_calls` entry with id, name and empty arguments;
 *   `content_block_delta` `text_delta` → `delta.content`, `input_json_delta` → that tool call's
 *   `function.arguments` piece (thinking deltas are not passed on);
 * - `message_delta` → the chunk with `finish_reason` (its cumulative `usage.output_tokens` is kept);
 * - `message_stop` → the usage-only chunk (`choices: []`) when usage was asked for, then `[DONE]`;
 * - `ping` → nothing; `error` → the stream fails with Anthropic's message (the relay ends the client's
 *   stream with an error event).
 */
import { Transform, type TransformCallback } from "node:stream";
import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";
import { type AnthropicUsage, chatUsage, finishReason } from "./response.js";

/** A stream that failed with an Anthropic `error` event. */
export class AnthropicStreamError extends Error {
  override readonly name = "AnthropicStreamError";
}

interface StreamEvent {
  type?: string;
  message?: { id?: string; model?: string; usage?: AnthropicUsage };
  index?: number;
  content_block?: { type?: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** Translates one stream's Anthropic SSE bytes into chat chunk SSE bytes (made per call). */
export class ChatChunkStream extends Transform {
  private readonly parser: EventSourceParser;
  private readonly decoder = new TextDecoder();
  private id = "msg_unknown";
  private model = "";
  private usage: AnthropicUsage = {};
  /** Content block index → tool call index. */
  private readonly toolIndex = new Map<number, number>();
  private done = false;

  /**
   * @param includeUsage send the usage-only chunk before `[DONE]` (`stream_options.include_usage`).
   * @param created Unix seconds for every chunk's `created`.
   */
  constructor(
    private readonly includeUsage: boolean,
    private readonly created: number,
  ) {
    super();
    this.parser = createParser({ onEvent: (event) => this.onEvent(event) });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.parser.feed(this.decoder.decode(chunk, { stream: true }));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  private chunk(choices: unknown[], usage?: unknown): void {
    const payload: Record<string, unknown> = {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      choices,
    };
    if (usage !== undefined) payload.usage = usage;
    this.push(`data: ${JSON.stringify(payload)}\n\n`);
  }

  private delta(delta: Record<string, unknown>, finish: string | null = null): void {
    this.chunk([{ index: 0, delta, logprobs: null, finish_reason: finish }]);
  }

  private onEvent(event: EventSourceMessage): void {
    if (this.done) return;
    let data: StreamEvent;
    try {
      data = JSON.parse(event.data) as StreamEvent;
    } catch {
      throw new AnthropicStreamError("Anthropic sent a stream event that is not JSON.");
    }
    switch (data.type ?? event.event) {
      case "message_start":
        this.id = data.message?.id ?? this.id;
        this.model = data.message?.model ?? this.model;
        this.usage = { ...data.message?.usage };
        this.delta({ role: "assistant", content: "" });
        break;
      case "content_block_start":
        if (data.content_block?.type === "tool_use") {
          const index = this.toolIndex.size;
          this.toolIndex.set(data.index ?? 0, index);
          const { id, name } = data.content_block;
          this.delta({
            tool_calls: [{ index, id, type: "function", function: { name, arguments: "" } }],
          });
        } else if (data.content_block?.type === "text" && data.content_block.text) {
          this.delta({ content: data.content_block.text });
        }
        break;
      case "content_block_delta":
        if (data.delta?.type === "text_delta" && typeof data.delta.text === "string") {
          this.delta({ content: data.delta.text });
        } else if (data.delta?.type === "input_json_delta" && typeof data.delta.partial_json === "string") {
          const index = this.toolIndex.get(data.index ?? 0) ?? 0;
          this.delta({ tool_calls: [{ index, function: { arguments: data.delta.partial_json } }] });
        }
        break;
      case "message_delta":
        // Cumulative counts: the latest wins; input counts are only sometimes repeated here.
        for (const [key, value] of Object.entries(data.usage ?? {})) {
          if (typeof value === "number" || (typeof value === "object" && value !== null))
            (this.usage as Record<string, unknown>)[key] = value;
        }
        if (data.delta?.stop_reason !== undefined) this.delta({}, finishReason(data.delta.stop_reason));
        break;
      case "message_stop":
        this.done = true;
        if (this.includeUsage) this.chunk([], chatUsage(this.usage));
        this.push("data: [DONE]\n\n");
        break;
      case "error":
        throw new AnthropicStreamError(
          `Anthropic's stream failed: ${data.error?.message ?? "unknown error"} (${data.error?.type ?? "error"}).`,
        );
      default: // ping, content_block_stop, and event types added later
        break;
    }
  }
}
