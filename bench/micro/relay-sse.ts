/**
 * Micro-benchmark of relaying a long stream (`npx tsx --conditions=development bench/micro/relay-sse.ts
 * [--streams N] [--rounds N] [--formats chat,responses,messages] [--collect] [--baseline <checkout>]`): one process, a real
 * HTTP server on loopback and a raw-socket client that discards what it reads. Each stream is 1,000 one-word text
 * deltas in one API's events (`relay-streams.ts`), one upstream piece per event with a turn of the event loop
 * between pieces (as when they arrive apart):
 *
 * - `chat`: chat completions' `relaySse` (streaming/relay-sse.ts) with an {@link OutputMeter} (the estimate);
 * - `responses`: the native Responses relay, `relayNative` (streaming/native-relay.ts) with the reader the
 *   endpoint composes (`completedResponseReader(idNotingReader(responsesEventReader()))`);
 * - `messages`: the native Anthropic Messages relay, `relayNative` with `assemblingReader(messagesEventReader())`.
 *
 * Side by side in rotating order, three rounds (`--rounds`), medians: per format, `pass-through` writes each piece as it is (the floor:
 * what any Node proxy pays), the relay of this checkout, and, with `--baseline`, the same from another checkout
 * (e.g. main before a change). With `--collect`, each relay also collects the text the client got, as the answer
 * step does when an observer wants the output (tracing). Prints process CPU (user + system) per stream, ms, and
 * its ratio to its format's pass-through; the client's and the fake upstream's share is in every row alike.
 */
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { parseArgs } from "node:util";
import { RELAY_FORMATS, type RelayFormat, relayStream } from "./relay-streams.js";

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    streams: { type: "string" },
    formats: { type: "string" },
    collect: { type: "boolean" },
    rounds: { type: "string" },
  },
});
const STREAMS = Number(values.streams ?? 40);
const ROUNDS = Number(values.rounds ?? 3);
const CHUNKS = 1000;
const formats = (values.formats?.split(",") ?? RELAY_FORMATS) as RelayFormat[];
for (const f of formats) if (!RELAY_FORMATS.includes(f)) throw new Error(`--formats: unknown format ${f}`);
const collect = values.collect === true;

async function* upstream(pieces: Buffer[]): AsyncIterable<Buffer> {
  for (const piece of pieces) {
    await new Promise(setImmediate);
    yield piece;
  }
}

/** Relays one stream of pieces to `res` (whose headers are sent) as a checkout's code for one format does. */
type Relay = (pieces: Buffer[], res: ServerResponse) => Promise<unknown>;

/** The relays of the checkout at `root`, per format (see the module comment). */
async function relaysOf(root: string): Promise<Record<RelayFormat, Relay>> {
  const src = `${root}/services/gateway/src`;
  const { relaySse } = await import(`${src}/streaming/relay-sse.ts`);
  const { relayNative } = await import(`${src}/streaming/native-relay.ts`);
  const { OutputMeter } = await import(`${src}/streaming/output-meter.ts`);
  const { StreamText } = await import(`${src}/streaming/stream-text.ts`);
  const { responsesEventReader } = await import(`${src}/endpoints/responses/native-events.ts`);
  const { idNotingReader } = await import(`${src}/endpoints/responses/ownership.ts`);
  const { completedResponseReader } = await import(`${src}/endpoints/responses/cache.ts`);
  const { messagesEventReader } = await import(`${src}/endpoints/messages/native-events.ts`);
  const { assemblingReader } = await import(`${src}/endpoints/messages/cache.ts`);
  const meter = () => new OutputMeter(16_384, undefined);
  const text = () => {
    const t = new StreamText();
    return (piece: string) => t.addText(piece);
  };
  const native = (reader: () => unknown) => (pieces: Buffer[], res: ServerResponse) =>
    relayNative(upstream(pieces), res, {
      reader: reader(),
      meter: meter(),
      promptTokens: 5,
      idleTimeoutMs: 60_000,
      onFirstEvent: () => {},
      ...(collect ? { onContent: text() } : {}),
    });
  return {
    chat: (pieces, res) =>
      relaySse(upstream(pieces), res, {
        stripUsage: false,
        meter: meter(),
        promptTokens: 5,
        ...(collect ? { onText: text() } : {}),
      }),
    responses: native(() => completedResponseReader(idNotingReader(responsesEventReader()).reader).reader),
    messages: native(() => assemblingReader(messagesEventReader()).reader),
  };
}

const variants = new Map<string, (res: ServerResponse) => Promise<void>>();
const checkouts: Array<[string, Record<RelayFormat, Relay>]> = [
  ["", await relaysOf(new URL("../..", import.meta.url).pathname)],
];
if (values.baseline !== undefined) checkouts.push([" (baseline)", await relaysOf(values.baseline)]);
for (const format of formats) {
  const pieces = relayStream(format, CHUNKS);
  variants.set(`${format} pass-through`, async (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for await (const piece of upstream(pieces)) res.write(piece);
    res.end();
  });
  for (const [suffix, relays] of checkouts)
    variants.set(`${format} relay${suffix}`, async (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      await relays[format](pieces, res);
    });
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
for (let round = 0; round < ROUNDS; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length]!);
  const row = new Map<string, number>();
  for (const name of order) row.set(name, await cpuPerStream(name, STREAMS));
  for (const [name, ms] of row) totals.get(name)!.push(ms);
  console.log(`${round + 1} | ${names.map((n) => row.get(n)!.toFixed(2)).join(" | ")}`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const name of names) {
  const ms = median(totals.get(name)!);
  const floor = median(totals.get(`${name.split(" ")[0]} pass-through`)!);
  console.log(
    `${name}: ${ms.toFixed(2)} ms/stream (median), ${(ms / floor).toFixed(2)}× its pass-through, +${(((ms - floor) * 1000) / CHUNKS).toFixed(1)} µs/chunk`,
  );
}
server.close();
