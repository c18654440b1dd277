/**
 * The guardrail bypass vectors of issue 20 as generators: where in a chat completions request a text can sit
 * ({@link PLACEMENTS}), and seeded Unicode variants of a value that a model reads the same as the plain value
 * (zero-width and other invisible format characters inserted, fullwidth forms, both mixed).
 */
import fc from "fast-check";

type Body = Record<string, unknown>;

/** One place a text can sit in a request the model reads; `build` makes a whole request body with `text` there. */
export interface Placement {
  name: string;
  build(text: string): Body;
}

const user = (content: unknown, extra: Body = {}) => ({ role: "user", content, ...extra });
const base = (messages: unknown[], extra: Body = {}): Body => ({ model: "general", messages, ...extra });
const hello = user("hello");

/** Every field of a chat completions request that carries model-visible text (issue 20, defect 2). */
export const PLACEMENTS: readonly Placement[] = [
  { name: "user content", build: (t) => base([user(`Note: ${t} end`)]) },
  { name: "text part", build: (t) => base([user([{ type: "text", text: t }])]) },
  { name: "input_text part", build: (t) => base([user([{ type: "input_text", text: t }])]) },
  { name: "part without a type", build: (t) => base([user([{ text: t }])]) },
  { name: "part of an unknown type", build: (t) => base([user([{ type: "x_note", note: t }])]) },
  { name: "system message", build: (t) => base([{ role: "system", content: t }, hello]) },
  {
    name: "developer message part",
    build: (t) => base([{ role: "developer", content: [{ type: "text", text: t }] }, hello]),
  },
  { name: "message name", build: (t) => base([user("hi", { name: t })]) },
  { name: "unknown message field", build: (t) => base([user("hi", { context: { notes: [t] } })]) },
  {
    name: "assistant tool-call arguments",
    build: (t) =>
      base([
        hello,
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "lookup", arguments: JSON.stringify({ q: t }) },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "done" },
      ]),
  },
  {
    name: "tool result",
    build: (t) =>
      base([
        hello,
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: t }] },
      ]),
  },
  {
    name: "tool description",
    build: (t) =>
      base([hello], { tools: [{ type: "function", function: { name: "lookup", description: t } }] }),
  },
  {
    name: "tool parameters",
    build: (t) =>
      base([hello], {
        tools: [
          {
            type: "function",
            function: {
              name: "lookup",
              parameters: { type: "object", properties: { q: { type: "string", description: t } } },
            },
          },
        ],
      }),
  },
  {
    name: "schema property name",
    build: (t) =>
      base([hello], {
        tools: [
          {
            type: "function",
            function: {
              name: "lookup",
              parameters: { type: "object", properties: { [t]: { type: "string" } }, required: [t] },
            },
          },
        ],
      }),
  },
  {
    name: "response_format schema",
    build: (t) =>
      base([hello], {
        response_format: {
          type: "json_schema",
          json_schema: {
            name: "answer",
            description: t,
            schema: { type: "object", properties: { a: { type: "string", description: t } } },
          },
        },
      }),
  },
  { name: "unknown top-level field", build: (t) => base([hello], { extra_context: t }) },
  { name: "unknown nested top-level field", build: (t) => base([hello], { x_rag: { docs: [{ body: t }] } }) },
];

/** Zero-width and other invisible format (Cf) characters, and default-ignorable ones models skip. */
export const INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u2063"];

/** The fullwidth form of an ASCII character (U+FF01..FF5E; U+3000 for a space), or the character itself. */
export function fullwidth(ch: string): string {
  const code = ch.charCodeAt(0);
  if (ch === " ") return "\u3000";
  return code > 0x20 && code < 0x7f ? String.fromCharCode(code + 0xfee0) : ch;
}

/**
 * Variants of `value`: each character independently kept, made fullwidth, or followed by an invisible
 * character, in proportions that give plain, zero-width-only, fullwidth-only and mixed strings.
 */
export function variantOf(value: string): fc.Arbitrary<string> {
  const chars = [...value];
  const style = fc.constantFrom("plain", "invisible", "fullwidth", "mixed");
  return style.chain((s) =>
    fc
      .tuple(
        ...chars.map(() =>
          fc.record({
            wide: fc.boolean(),
            invisible: fc.option(fc.constantFrom(...INVISIBLE), { nil: undefined }),
          }),
        ),
      )
      .map((choices) =>
        chars
          .map((ch, i) => {
            const c = choices[i];
            const wide = (s === "fullwidth" || s === "mixed") && c?.wide === true;
            const after =
              (s === "invisible" || s === "mixed") && c?.invisible !== undefined ? c.invisible : "";
            return (wide ? fullwidth(ch) : ch) + after;
          })
          .join(""),
      ),
  );
}

/** What the model would read: NFKC, invisible characters dropped (the test's own oracle, not the gateway's code). */
export const asRead = (text: string): string =>
  text.replace(/[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu, "").normalize("NFKC");
