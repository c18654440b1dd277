/**
 * Micro-benchmark of the guardrails' text extraction (`npx tsx bench/micro/guardrail-texts.ts`), side by side in
 * one run: the extraction before issue 20 (`pii/texts.ts` `requestTexts` at commit 5c28912, read from git: string
 * content, `text` parts and tool-call arguments only, nothing normalised) and today's `chatRequestTexts` alone and
 * followed by `normalizeForDetection` of every text (what the PII guardrail does per call). Four requests: an
 * ASCII chat turn, the same with tools and a response_format schema, a non-ASCII turn that normalisation leaves
 * unchanged, and one with fullwidth and zero-width characters (the mapped path). Prints µs per call, 3 rounds.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chatRequestTexts } from "../../services/gateway/src/endpoints/chat-completions/texts.js";
import { normalizeForDetection } from "../../services/gateway/src/guardrails/text/normalize.js";

const BEFORE = "5c28912";
const dir = mkdtempSync(join(tmpdir(), "bench-texts-"));
const oldFile = join(dir, "texts.ts");
writeFileSync(
  oldFile,
  execFileSync("git", ["show", `${BEFORE}:services/gateway/src/guardrails/pii/texts.ts`], {
    encoding: "utf8",
  }),
);
const old = (await import(pathToFileURL(oldFile).href)) as {
  requestTexts(messages: unknown[]): Array<{ text: string }>;
};

const prose = "Please summarise the attached meeting notes and list the action items with owners. ".repeat(3);
const turn = (text: string) => [
  { role: "system", content: "You are a helpful assistant for the platform team." },
  { role: "user", content: text },
  { role: "assistant", content: "Here is the summary you asked for, with the owners named." },
  { role: "user", content: [{ type: "text", text: `${text} Reply to jane.doe@example.org.` }] },
];
const tools = [
  {
    type: "function",
    function: {
      name: "lookup",
      description: "Look up an order by its number.",
      parameters: {
        type: "object",
        properties: { order: { type: "string", description: "The order number" } },
        required: ["order"],
      },
    },
  },
];
const responseFormat = {
  type: "json_schema",
  json_schema: {
    name: "summary",
    schema: { type: "object", properties: { items: { type: "array", description: "Action items" } } },
  },
};
const cases: Array<[string, Record<string, unknown>]> = [
  ["ASCII chat turn (4 messages, ~1 KB)", { model: "general", messages: turn(prose) }],
  [
    "same + tools and response_format",
    { model: "general", messages: turn(prose), tools, response_format: responseFormat },
  ],
  [
    "non-ASCII, already normal",
    {
      model: "general",
      messages: turn(`Bitte fasse die Notizen zusammen — 会議のメモを要約してください。 ${prose}`),
    },
  ],
  [
    "fullwidth and zero-width characters",
    { model: "general", messages: turn(`Ｐｌｅａｓｅ\u200b ｓｕｍｍａｒｉｓｅ\u2060 ${prose}`) },
  ],
];

let sink = 0;
const N = 100_000;
const time = (fn: () => number): number => {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink += fn();
  return Number(process.hrtime.bigint() - t0) / N / 1000;
};
for (let round = 1; round <= 3; round++) {
  console.log(`round ${round} (µs per call)`);
  for (const [name, body] of cases) {
    const messages = body.messages as unknown[];
    const before = time(() => old.requestTexts(messages).length);
    const now = time(() => chatRequestTexts(body).length);
    const normalised = time(() => {
      let n = 0;
      for (const s of chatRequestTexts(body)) n += normalizeForDetection(s.text).text.length;
      return n;
    });
    console.log(
      `  ${name.padEnd(38)} before ${before.toFixed(2)}  extraction ${now.toFixed(2)}  extraction+normalise ${normalised.toFixed(2)}`,
    );
  }
}
if (sink === 0) console.log("(nothing extracted)");
