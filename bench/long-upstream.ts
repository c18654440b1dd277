/**
 * Benchmark child: an upstream whose chat-completion streams do not end soon (test/fixtures/misbehaving-upstream.ts,
 * `long`: `BENCH_LONG_TOKENS` one-word tokens, default 100,000,000, in chunks of 50, as fast as its client takes
 * them: it waits for `drain`). Prints one JSON line `{"ready":true,"url":"http://127.0.0.1:<port>/v1"}` on stdout
 * when listening, then every 500 ms `{"bytesWritten":…,"blocked":…}` (its streams' bytes written so far and how
 * many of them wait for `drain`); exits on SIGTERM.
 */
import { startMisbehavingUpstream } from "../test/fixtures/misbehaving-upstream.js";

const tokens = Number(process.env.BENCH_LONG_TOKENS ?? 100_000_000);
const upstream = await startMisbehavingUpstream();
upstream.behave({ kind: "long", tokens, perChunk: 50, usage: false });
process.stdout.write(`${JSON.stringify({ ready: true, url: upstream.url })}\n`);
const report = setInterval(() => {
  const { bytesWritten, blocked } = upstream.long;
  process.stdout.write(`${JSON.stringify({ bytesWritten, blocked })}\n`);
}, 500);
process.once("SIGTERM", () => {
  clearInterval(report);
  void upstream.close().then(() => process.exit(0));
});
