/**
 * Micro-benchmark of relaying a long chat stream (`npx tsx --conditions=development bench/micro/relay-sse.ts
 * [--streams N] [--collect] [--baseline <checkout>]`): one process, a real HTTP server on loopback and a raw-socket client that discards what
 * it reads. Each stream is 1,000 `chat.completion.chunk` events (one word each, `"usage":null` as an upstream
 * adds when `stream_options.include_usage` is asked for), the usage chunk and `[DONE]`, one upstream piece per
 * event with a turn of the event loop between pieces (as when they arrive apart). Side by side in rotating order,
 * three rounds: `pass-through` writes each piece as it is (the floor: what any Node proxy pays), `relaySse` of
 * this checkout with an {@link OutputMeter} (the estimate) as the gateway relays it, and, with `--baseline`, the
 * same from another checkout (e.g. main before a change). With `--collect`, each relay also collects the text the
 * client got, as the answer step does when an observer wants the output (tracing): a checkout with
 * `streaming/released-text.ts` through `onText`, an older one through `onPayload` and `StreamText.add`. Prints process CPU (user + system) per stream, ms, and
 * its ratio to the pass-through's; the client's and the fake upstream's share is in every row alike.
 */
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { parseArgs } from "node:util";
import { OutputMeter } from "../../services/gateway/src/streaming/output-meter.js";
import { type RelayOptions, relaySse } from "../../services/gateway/src/streaming/relay-sse.js";
import { StreamText } from "../../services/gateway/src/streaming/stream-text.js";

type Relay = typeof relaySse;
type Meter = typeof OutputMeter;
type Text = typeof StreamText;
/** How a checkout's relay hands over the client's text, given a fresh StreamText per stream (`--collect`). */
type Collect = (() => Partial<RelayOptions>) | undefined;

const { values } = parseArgs({
  options: { baseline: { type: "string" }, streams: { type: "string" }, collect: { type: "boolean" } },
});
const STREAMS = Number(values.streams ?? 40);
const CHUNKS = 1000;
const words = "The quick brown fox jumps over the lazy dog while the gateway counts every token".split(" ");
const head = `"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"fake-model"`;
const pieces = [
  ...Array.from({ length: CHUNKS }, (_, i) =>
    Buffer.from(
      `data: {${head},"choices":[{"index":0,"delta":{"content":" ${words[i % words.length]}"},"finish_reason":null}],"usage":null}\n\n`,
    ),
  ),
  Buffer.from(
    `data: {${head},"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":${CHUNKS},"total_tokens":${CHUNKS + 5}}}\n\n`,
  ),
  Buffer.from("data: [DONE]\n\n"),
];

async function* upstream(): AsyncIterable<Buffer> {
  for (const piece of pieces) {
    await new Promise(setImmediate);
    yield piece;
  }
}

const variants = new Map<string, (res: ServerResponse) => Promise<void>>();
variants.set("pass-through", async (res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for await (const piece of upstream()) res.write(piece);
  res.end();
});
const relayWith = (relay: Relay, Meter: Meter, collect: Collect) => async (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  await relay(upstream(), res, {
    stripUsage: false,
    meter: new Meter(16_384, undefined),
    promptTokens: 5,
    ...collect?.(),
  });
};
/** The collection of `--collect` for a checkout's streaming directory (see the module comment). */
const collectFor = (src: string, Text: Text): Collect => {
  if (values.collect !== true) return undefined;
  if (existsSync(`${src}/released-text.ts`))
    return () => {
      const text = new Text();
      return { onText: (piece: string) => text.addText(piece) };
    };
  return () => {
    const text = new Text();
    return { onPayload: (payload: string) => text.add(payload) };
  };
};
const here = new URL("../../services/gateway/src/streaming", import.meta.url).pathname;
variants.set("relaySse", relayWith(relaySse, OutputMeter, collectFor(here, StreamText)));
if (values.baseline !== undefined) {
  const src = `${values.baseline}/services/gateway/src/streaming`;
  const before = (await import(`${src}/relay-sse.ts`)) as { relaySse: Relay };
  const meter = (await import(`${src}/output-meter.ts`)) as { OutputMeter: Meter };
  const text = (await import(`${src}/stream-text.ts`)) as { StreamText: Text };
  variants.set(
    "relaySse (baseline)",
    relayWith(before.relaySse, meter.OutputMeter, collectFor(src, text.StreamText)),
  );
}

const server = createServer((req, res) => void variants.get(decodeURIComponent(req.url!.slice(1)))!(res));
server.listen(0, "127.0.0.1");
await once(server, "listening");
const { port } = server.address() as AddressInfo;

/** One stream through `name`, read by a raw socket to its end (the server closes each connection). */
async function stream(name: string): Promise<void> {
  const socket = connect(port, "127.0.0.1");
  socket.write(`GET /${encodeURIComponent(name)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
  socket.on("data", () => {});
  await once(socket, "close");
}

/** CPU (user + system) per stream, ms, for `streams` streams 8 at a time. */
async function cpuPerStream(name: string, streams: number): Promise<number> {
  const start = process.cpuUsage();
  for (let done = 0; done < streams; done += 8)
    await Promise.all(Array.from({ length: Math.min(8, streams - done) }, () => stream(name)));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / streams;
}

const names = [...variants.keys()];
for (const name of names) await cpuPerStream(name, 8); // warm-up
const totals = new Map<string, number[]>(names.map((n) => [n, []]));
console.log(`round | ${names.map((n) => `${n} ms/stream`).join(" | ")}`);
for (let round = 0; round < 3; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length]!);
  const row = new Map<string, number>();
  for (const name of order) row.set(name, await cpuPerStream(name, STREAMS));
  for (const [name, ms] of row) totals.get(name)!.push(ms);
  console.log(`${round + 1} | ${names.map((n) => row.get(n)!.toFixed(2)).join(" | ")}`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const floor = median(totals.get("pass-through")!);
for (const name of names) {
  const ms = median(totals.get(name)!);
  console.log(
    `${name}: ${ms.toFixed(2)} ms/stream (median), ${(ms / floor).toFixed(2)}× the pass-through, +${(((ms - floor) * 1000) / CHUNKS).toFixed(1)} µs/chunk`,
  );
}
server.close();
