/**
 * A chat completion chunk stream written as Messages stream events (Anthropic API reference, "Streaming
 * Messages"): `message_start`, then per content block `content_block_start`, `content_block_delta`
 * (`text_delta` for `delta.content`, `input_json_delta` for a tool call's `arguments`), `content_block_stop`,
 * then `message_delta` (`stop_reason`, `usage.output_tokens`) and `message_stop` at `[DONE]`. An error payload
 * (a guard's block, an upstream failure, a timeout) becomes `event: error` with an Anthropic error body.
 *
 * `message_start` carries the prompt's input tokens, as Anthropic's does (clients such as LangChain read the
 * input count there and only the output count from `message_delta`): the first chunk's usage when the upstream
 * sends usage on every chunk (vLLM's `continuous_usage_stats`), else the gateway's prompt estimate. A chat
 * stream reports its usage at its end, so the exact counts (`input_tokens`, cache reads) come again with
 * `message_delta`'s usage.
 */
import { anthropicErrorBody } from "../../errors/anthropic-error.js";
import type { StreamEncoder } from "../../streaming/relay-sse.js";
import { messageId, messagesUsage, stopReason } from "./from-chat.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** One SSE event: `event: <type>` and its JSON data. */
const sse = (data: { type: string; [field: string]: unknown }) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/** An OpenAI-shaped error payload as an `error` event. */
function errorEvent(payload: Obj): string {
  const error = isObj(payload.error) ? payload.error : {};
  const status = Number(error.code);
  const message = typeof error.message === "string" ? error.message : "The stream failed.";
  return sse(anthropicErrorBody(Number.isInteger(status) && status >= 400 ? status : 500, message));
}

/**
 * A per-call encoder (see the module comment) for `answerStream`'s `encoder` option; `model` names the model
 * in `message_start` when the first chunk does not; `promptEstimate` (tokens) is `message_start`'s
 * `input_tokens` when the first chunk carries no usage.
 */
export function messagesStreamEncoder(model: string, promptEstimate: number): StreamEncoder {
  let started = false;
  let finished = false;
  /** The open block's index and kind, or -1. */
  let open = -1;
  let openKind: "text" | "tool_use" | undefined;
  let next = 0;
  /** Chat tool call index → its `tool_use` block's index. */
  const toolBlocks = new Map<number, number>();
  let stop: string | undefined;
  let usage: unknown;

  const close = () => {
    if (open < 0) return "";
    const out = sse({ type: "content_block_stop", index: open });
    open = -1;
    openKind = undefined;
    return out;
  };
  const start = (chunk: Obj) => {
    if (started) return "";
    started = true;
    const message = {
      id: messageId(chunk.id),
      type: "message",
      role: "assistant",
      model: typeof chunk.model === "string" ? chunk.model : model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: isObj(chunk.usage) ? messagesUsage(chunk.usage).input_tokens : promptEstimate,
        output_tokens: 0,
      },
    };
    return sse({ type: "message_start", message });
  };
  const text = (value: string) => {
    let out = "";
    if (openKind !== "text") {
      out += close();
      open = next++;
      openKind = "text";
      out += sse({ type: "content_block_start", index: open, content_block: { type: "text", text: "" } });
    }
    return (
      out + sse({ type: "content_block_delta", index: open, delta: { type: "text_delta", text: value } })
    );
  };
  const toolCall = (call: Obj) => {
    let out = "";
    const key = typeof call.index === "number" ? call.index : 0;
    const fn = isObj(call.function) ? call.function : {};
    let index = toolBlocks.get(key);
    if (index === undefined) {
      out += close();
      index = next++;
      toolBlocks.set(key, index);
      open = index;
      openKind = "tool_use";
      const block = { type: "tool_use", id: call.id, name: fn.name, input: {} };
      out += sse({ type: "content_block_start", index, content_block: block });
    }
    // Arguments of an earlier call arriving after another block opened are still sent under their own index.
    if (typeof fn.arguments === "string" && fn.arguments !== "")
      out += sse({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: fn.arguments },
      });
    return out;
  };
  const end = () => {
    if (finished) return "";
    finished = true;
    const u = messagesUsage(usage);
    let out = close();
    out += sse({
      type: "message_delta",
      delta: { stop_reason: stop ?? "end_turn", stop_sequence: null },
      usage: u,
    });
    return out + sse({ type: "message_stop" });
  };

  return {
    encode(payload) {
      if (payload === "[DONE]") return started ? end() : "";
      let chunk: unknown;
      try {
        chunk = JSON.parse(payload);
      } catch {
        return ""; // not a chunk: nothing a Messages client could read
      }
      if (!isObj(chunk)) return "";
      if (isObj(chunk.error)) return (started && !finished ? close() : "") + errorEvent(chunk);
      let out = start(chunk);
      if (isObj(chunk.usage)) usage = chunk.usage;
      const choice = Array.isArray(chunk.choices) && isObj(chunk.choices[0]) ? chunk.choices[0] : undefined;
      if (choice === undefined) return out;
      const delta = isObj(choice.delta) ? choice.delta : {};
      if (typeof delta.content === "string" && delta.content !== "") out += text(delta.content);
      if (Array.isArray(delta.tool_calls))
        for (const call of delta.tool_calls) if (isObj(call)) out += toolCall(call);
      if (typeof choice.finish_reason === "string") stop = stopReason(choice.finish_reason);
      return out;
    },
  };
}
