/**
 * Reads the commonest `chat.completion.chunk` without `JSON.parse`: one choice whose `delta` holds only `content`,
 * no finish reason, `usage` null or absent, in OpenAI's own member order (OpenAI API reference, "The chat
 * completion chunk object"):
 * `{"id":"…","object":"chat.completion.chunk","created":N,"model":"…",["system_fingerprint":…,]"choices":[{"index":N,"delta":{"content":"…"},["logprobs":null,]"finish_reason":null[,"logprobs":null]}][,"usage":null]}`.
 * Any other chunk (another member, another order, whitespace, several choices, a role, tool calls) is not
 * matched and the relay parses it whole, so what is read is the same either way; this only saves the parse.
 */

const PLAIN =
  /^\{"id":"[^"\\]*","object":"chat\.completion\.chunk","created":\d+,"model":"[^"\\]*",(?:"system_fingerprint":(?:null|"[^"\\]*"),)?"choices":\[\{"index":(\d+),"delta":\{"content":("(?:[^"\\]|\\.)*")\},(?:"logprobs":null,)?"finish_reason":null(?:,"logprobs":null)?\}\](?:,"usage":null)?\}$/;

/** The choice index and content text of a plain content chunk (see the module comment); undefined for any other. */
export function plainContentChunk(data: string): { index: number; text: string } | undefined {
  const match = PLAIN.exec(data);
  if (match === null) return undefined;
  try {
    // The content is a JSON string literal; an invalid escape or a raw control character throws.
    return { index: Number(match[1]), text: JSON.parse(match[2]!) as string };
  } catch {
    return undefined;
  }
}
