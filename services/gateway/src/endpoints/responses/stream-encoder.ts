/**
 * Writes a relayed chat completions stream as the Responses API's streaming events (OpenAI API reference,
 * "Streaming events", schema `ResponseStreamEvent`): server-sent events `event: <type>` + `data: <json>`, each
 * with a rising `sequence_number`, no `[DONE]`.
 *
 * Order: `response.created`, `response.in_progress` (on the first payload); for text, `response.output_item.added`
 * (a message item), `response.content_part.added`, `response.output_text.delta`…; for each tool call,
 * `response.output_item.added` (a function_call item) and `response.function_call_arguments.delta`…; at the
 * chat's `[DONE]` every open item is closed (`response.output_text.done`, `response.content_part.done`,
 * `response.function_call_arguments.done`, `response.output_item.done`) and the stream ends with
 * `response.completed` carrying the whole response and its usage, or `response.incomplete` when the chat stopped
 * at its token cap (`finish_reason: "length"`, also the gateway's cut at the reservation). An error payload (an
 * upstream failure, a timeout, a guardrail's block) becomes an `error` event followed by `response.failed`.
 *
 * Only the first choice is read (the Responses API has no `n`).
 */

import type { StreamEncoder } from "../../streaming/relay-sse.js";
import { openAiUsage } from "../../usage/provider-usage.js";
import {
  functionCallItem,
  incompleteReason,
  messageItem,
  newId,
  responseShell,
  responseUsage,
} from "./response-object.js";
import type { ResponsesRequest } from "./schema.js";

type Obj = Record<string, unknown>;

interface ChunkDelta {
  content?: string | null;
  refusal?: string | null;
  tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
}

interface Chunk {
  created?: number;
  model?: string;
  usage?: Obj | null;
  choices?: Array<{ index?: number; delta?: ChunkDelta; finish_reason?: string | null }>;
  error?: { message?: string; type?: string; code?: string | null; param?: string | null };
}

/** One output item being streamed. */
interface OpenItem {
  index: number;
  id: string;
  kind: "message" | "function_call";
  text: string;
  /** Function calls: the chat tool call's id and name. */
  callId: string;
  name: string;
}

/** The Responses error code for a gateway error type (the schema's `ResponseErrorCode` enum). */
const errorCode = (type: string | undefined): string =>
  type === "rate_limit_error" ? "rate_limit_exceeded" : "server_error";

/** A stateful encoder for one call (see the module comment). */
export class ResponsesStreamEncoder implements StreamEncoder {
  private sequence = 0;
  private started = false;
  private finished = false;
  private readonly id = newId("resp");
  private createdAt = Math.floor(Date.now() / 1000);
  private model: string;
  private readonly items: OpenItem[] = [];
  private message: OpenItem | undefined;
  /** Open function call items by the chat tool call's `index`. */
  private readonly calls = new Map<number, OpenItem>();
  private finishReason: string | null | undefined;
  private usage: Obj | undefined;

  constructor(private readonly body: ResponsesRequest) {
    this.model = body.model;
  }

  encode(payload: string): string {
    if (this.finished) return "";
    let out = "";
    if (payload === "[DONE]") return this.start(undefined) + this.complete();
    let chunk: Chunk;
    try {
      chunk = JSON.parse(payload) as Chunk;
    } catch {
      return "";
    }
    out += this.start(chunk);
    if (chunk.error !== undefined) return out + this.fail(chunk.error);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (choice === undefined) return out;
    const delta = choice.delta ?? {};
    const text = delta.content ?? delta.refusal;
    if (typeof text === "string" && text !== "") out += this.textDelta(text);
    for (const call of delta.tool_calls ?? []) out += this.callDelta(call);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return out;
  }

  private event(type: string, fields: Obj): string {
    const data = JSON.stringify({ type, sequence_number: this.sequence++, ...fields });
    return `event: ${type}\ndata: ${data}\n\n`;
  }

  private shell(status: "in_progress" | "completed" | "incomplete" | "failed"): Obj {
    return responseShell(this.body, this.id, this.createdAt, this.model, status);
  }

  private start(chunk: Chunk | undefined): string {
    if (this.started) return "";
    this.started = true;
    if (typeof chunk?.created === "number") this.createdAt = chunk.created;
    if (typeof chunk?.model === "string") this.model = chunk.model;
    const response = this.shell("in_progress");
    return this.event("response.created", { response }) + this.event("response.in_progress", { response });
  }

  private open(kind: OpenItem["kind"], callId = "", name = ""): { item: OpenItem; out: string } {
    const item: OpenItem = {
      index: this.items.length,
      id: newId(kind === "message" ? "msg" : "fc"),
      kind,
      text: "",
      callId,
      name,
    };
    this.items.push(item);
    const added =
      kind === "message"
        ? { ...messageItem(item.id, "", "in_progress"), content: [] }
        : functionCallItem(item.id, callId, name, "", "in_progress");
    let out = this.event("response.output_item.added", { output_index: item.index, item: added });
    if (kind === "message") {
      out += this.event("response.content_part.added", {
        item_id: item.id,
        output_index: item.index,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [], logprobs: [] },
      });
    }
    return { item, out };
  }

  private textDelta(text: string): string {
    let out = "";
    if (this.message === undefined) {
      const opened = this.open("message");
      this.message = opened.item;
      out += opened.out;
    }
    this.message.text += text;
    return (
      out +
      this.event("response.output_text.delta", {
        item_id: this.message.id,
        output_index: this.message.index,
        content_index: 0,
        delta: text,
        logprobs: [],
      })
    );
  }

  private callDelta(call: NonNullable<ChunkDelta["tool_calls"]>[number]): string {
    const key = call.index ?? 0;
    let item = this.calls.get(key);
    let out = "";
    if (item === undefined) {
      const opened = this.open("function_call", call.id ?? newId("fc"), call.function?.name ?? "");
      item = opened.item;
      this.calls.set(key, item);
      out += opened.out;
    }
    const args = call.function?.arguments;
    if (typeof args === "string" && args !== "") {
      item.text += args;
      out += this.event("response.function_call_arguments.delta", {
        item_id: item.id,
        output_index: item.index,
        delta: args,
      });
    }
    return out;
  }

  /** The item as `response.output_item.done` and the final response carry it. */
  private done(item: OpenItem, status: string): Obj {
    return item.kind === "message"
      ? messageItem(item.id, item.text, status)
      : functionCallItem(item.id, item.callId, item.name, item.text, "completed");
  }

  private complete(): string {
    this.finished = true;
    const reason = incompleteReason(this.finishReason);
    const status = reason === undefined ? "completed" : "incomplete";
    let out = "";
    for (const item of this.items) {
      const ids = { item_id: item.id, output_index: item.index };
      if (item.kind === "message") {
        out += this.event("response.output_text.done", {
          ...ids,
          content_index: 0,
          text: item.text,
          logprobs: [],
        });
        out += this.event("response.content_part.done", {
          ...ids,
          content_index: 0,
          part: { type: "output_text", text: item.text, annotations: [], logprobs: [] },
        });
      } else {
        out += this.event("response.function_call_arguments.done", {
          ...ids,
          name: item.name,
          arguments: item.text,
        });
      }
      out += this.event("response.output_item.done", {
        output_index: item.index,
        item: this.done(item, status),
      });
    }
    const response = this.shell(status);
    response.output = this.items.map((item) => this.done(item, status));
    response.usage = responseUsage(openAiUsage(this.usage));
    if (reason !== undefined) response.incomplete_details = { reason };
    return (
      out + this.event(status === "completed" ? "response.completed" : "response.incomplete", { response })
    );
  }

  private fail(error: NonNullable<Chunk["error"]>): string {
    this.finished = true;
    const message = error.message ?? "The upstream failed.";
    const response = this.shell("failed");
    response.output = this.items.map((item) => this.done(item, "incomplete"));
    response.error = { code: errorCode(error.type), message };
    return (
      this.event("error", { code: error.code ?? error.type ?? null, message, param: error.param ?? null }) +
      this.event("response.failed", { response })
    );
  }
}
