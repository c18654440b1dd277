/**
 * What the semantic cache compares of a request: the text it embeds (the last user message of a chat, the
 * prompt of a text completion) and the body without that text, which must match exactly (hashed into the entry's
 * filter key by `key.ts`: the model group, the system prompt, the earlier turns and every parameter). Requests
 * with tools are never looked up semantically: a near-duplicate question may need a different tool call.
 */

/** The semantic view of one request. */
export interface SemanticPrompt {
  /** The text embedded. */
  text: string;
  /** The body with `text` left out (set to ""): what must match exactly. */
  exactPart: Record<string, unknown>;
}

/** The text of a chat message's `content`: a string, or the `text` parts of a content array; undefined otherwise. */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content as { type?: unknown; text?: unknown }[];
  if (parts.some((p) => p?.type !== "text" || typeof p.text !== "string")) return undefined; // images, audio: exact only
  return parts.map((p) => p.text as string).join("\n");
}

/**
 * The semantic view of a chat completions (`acompletion`) or text completions (`atext_completion`) body, or
 * undefined when the request is not looked up semantically: another call type, `tools` (or legacy `functions`)
 * present, a chat whose last message is not a user's text, a prompt that is not one string, or an empty text.
 */
export function semanticPrompt(callType: string, body: Record<string, unknown>): SemanticPrompt | undefined {
  const hasTools = (Array.isArray(body.tools) && body.tools.length > 0) || Array.isArray(body.functions);
  if (hasTools) return undefined;
  if (callType === "atext_completion") {
    if (typeof body.prompt !== "string" || body.prompt.trim() === "") return undefined;
    return { text: body.prompt, exactPart: { ...body, prompt: "" } };
  }
  if (callType !== "acompletion" || !Array.isArray(body.messages)) return undefined;
  const messages = body.messages as Record<string, unknown>[];
  const last = messages.at(-1);
  if (last?.role !== "user") return undefined;
  const text = contentText(last.content);
  if (text === undefined || text.trim() === "") return undefined;
  return { text, exactPart: { ...body, messages: [...messages.slice(0, -1), { ...last, content: "" }] } };
}
