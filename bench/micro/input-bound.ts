/**
 * Micro-benchmark of the admit step's input bound (`npx tsx --conditions=development bench/micro/input-bound.ts`):
 * per call, side by side in one run, three rounds, on a typical chat body (a system prompt, two turns) and on a
 * long one (a 20 KB history): the old "bytes ÷ 4" estimate of the JSON text, the byte bound every budgeted call now
 * takes (`byteBound`), and the tokenizer bound (`tokenizerBound`, o200k) that only a call a budget refused takes.
 * Prints µs per call.
 */
import type { Deployment } from "../../services/gateway/src/config/types.js";
import { estimatePromptTokensOfText } from "../../services/gateway/src/cost/estimate.js";
import { byteBound, tokenizerBound } from "../../services/gateway/src/cost/input-bound.js";

const gpt4o: Deployment = {
  id: "gpt-4o",
  modelName: "general",
  provider: "openai",
  upstreamModel: "gpt-4o",
  apiBase: "https://api.openai.com/v1",
  tags: [],
  created: 0,
};
const turn = (role: string, content: string) => ({ role, content });
const typical = {
  model: "general",
  messages: [
    turn("system", "You are a helpful assistant for the platform team. Answer briefly."),
    turn("user", "Summarise the quarterly report in three bullet points, please."),
    turn("assistant", "Revenue grew 12 %, costs fell 3 %, and two new regions opened."),
    turn("user", "Which region grew fastest?"),
  ],
  max_tokens: 200,
};
const long = {
  ...typical,
  messages: Array.from({ length: 80 }, (_, i) =>
    turn(
      i % 2 === 0 ? "user" : "assistant",
      `Turn ${i}: ${"the gateway reserves before it sends ".repeat(7)}`,
    ),
  ),
};

function perCall(f: () => unknown, n: number): number {
  for (let i = 0; i < n / 10; i++) f();
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - started) / 1000 / n;
}

console.log("round | body | bytes ÷ 4 µs | byteBound µs | tokenizerBound µs");
for (let round = 1; round <= 3; round++) {
  for (const [name, body, n] of [
    ["typical", typical, 50_000],
    ["20 KB history", long, 2_000],
  ] as const) {
    const text = JSON.stringify(body);
    const old = perCall(() => estimatePromptTokensOfText(text), n);
    const bytes = perCall(() => byteBound(body, [gpt4o]), n);
    const tokens = perCall(() => tokenizerBound(body, [gpt4o]), n);
    console.log(`${round} | ${name} | ${old.toFixed(2)} | ${bytes.toFixed(2)} | ${tokens.toFixed(2)}`);
  }
}
