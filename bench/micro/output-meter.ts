/**
 * Micro-benchmark of counting a stream's output (`npx tsx --conditions=development bench/micro/output-meter.ts`):
 * per chunk, side by side in one run, three rounds: `JSON.parse` of the chunk alone (what the relay does
 * anyway), then the parse plus {@link OutputMeter} with the `o200k_base` tokenizer (OpenAI-family models) and
 * with the estimate (other models). Chunks of one word (what servers stream) and of ~70 characters (what a
 * proxy that merges chunks sends). Prints µs per chunk.
 */
import { chunkText, OutputMeter, tokenizerFor } from "../../services/gateway/src/streaming/output-meter.js";

const N = 50_000;
const words = "The quick brown fox jumps over the lazy dog while the gateway counts every token".split(" ");
const payload = (text: string) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "gpt-4o-mini",
    choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
  });
const single = Array.from({ length: N }, (_, i) => payload(` ${words[i % words.length]}`));
const merged = Array.from({ length: N }, (_, i) =>
  payload(`Several words in one chunk, as a proxy merges them: ${i}`),
);
const tokenizer = tokenizerFor("gpt-4o-mini");

function run(chunks: string[], meter: () => OutputMeter | undefined): number {
  const m = meter();
  const started = process.hrtime.bigint();
  for (const data of chunks) {
    const chunk = JSON.parse(data) as { choices?: unknown };
    if (m?.fits(chunkText(chunk))) m.commit();
  }
  return Number(process.hrtime.bigint() - started) / 1000 / chunks.length;
}

console.log("round | chunk | parse only µs | parse + tokenizer µs | parse + estimate µs");
for (let round = 1; round <= 3; round++) {
  for (const [name, chunks] of [
    ["1 word", single],
    ["~70 chars", merged],
  ] as const) {
    const parse = run(chunks, () => undefined);
    const tok = run(chunks, () => new OutputMeter(1e12, tokenizer));
    const est = run(chunks, () => new OutputMeter(1e12, undefined));
    console.log(`${round} | ${name} | ${parse.toFixed(2)} | ${tok.toFixed(2)} | ${est.toFixed(2)}`);
  }
}
