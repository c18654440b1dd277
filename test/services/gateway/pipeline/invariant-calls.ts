/**
 * Pieces the generative money-invariant tests share: price lines for a deployment, and sending one drawn call to a
 * gateway harness with the harness's virtual key, reading its answer (a stream too) to the end.
 */
import { type ChatHarness, VIRTUAL_KEY } from "../endpoints/chat-completions/harness.js";

/** A deployment's `litellm_params` price lines: `price` USD per input and per output token. */
export const priced = (price: number) =>
  `      input_cost_per_token: ${price}\n      output_cost_per_token: ${price}\n`;

/** Posts `body` to `path` on `h` as the harness's key (Anthropic's version header included); the status. */
export async function sendCall(h: ChatHarness, path: string, body: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${VIRTUAL_KEY}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });
  await res.text();
  return res.status;
}

/** What a drawn call to a model endpoint says: its alias, text, whether it streams, its output cap, `n`. */
export interface ModelCall {
  model: string;
  content: string;
  stream: boolean;
  cap: number | undefined;
  n?: number;
}

/**
 * The path and JSON body of a call to chat completions, Responses (`store: false`), Messages or Messages'
 * count_tokens, as a client writes it (OpenAI's and Anthropic's request shapes; Messages requires `max_tokens`).
 */
export function modelRequest(
  endpoint: "chat" | "responses" | "messages" | "count_tokens",
  c: ModelCall,
): { path: string; body: Record<string, unknown> } {
  const messages = [{ role: "user", content: c.content }];
  const cap = (name: string) => (c.cap === undefined ? {} : { [name]: c.cap });
  switch (endpoint) {
    case "chat": {
      const n = c.n === undefined ? {} : { n: c.n };
      const body = { model: c.model, messages, stream: c.stream, ...n, ...cap("max_tokens") };
      return { path: "/v1/chat/completions", body };
    }
    case "responses": {
      const body = {
        model: c.model,
        input: c.content,
        stream: c.stream,
        store: false,
        ...cap("max_output_tokens"),
      };
      return { path: "/v1/responses", body };
    }
    case "messages":
      return {
        path: "/v1/messages",
        body: { model: c.model, max_tokens: c.cap ?? 100, messages, stream: c.stream },
      };
    case "count_tokens":
      return { path: "/v1/messages/count_tokens", body: { model: c.model, messages } };
  }
}

export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
