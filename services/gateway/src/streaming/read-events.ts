/**
 * The read loop of the stream relays (`relay-sse.ts`, `native-relay.ts`): upstream pieces through the SSE parser,
 * one write per piece, the relay's turn after each piece, and flow control towards the client.
 */
import { isUtf8 } from "node:buffer";
import type { ServerResponse } from "node:http";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { mustWait, waitForClient } from "./client-flow.js";
import type { PieceWriter } from "./piece-writer.js";

/**
 * What a relay runs after each piece read: `resume` (parked events' top-ups, {@link ParkedEvents.resume}), then
 * `drain` (the output guard's turn) when there is a guard. Returns undefined when nothing is to be awaited.
 */
export function afterFeed(
  resume: () => Promise<void> | undefined,
  drain: (() => Promise<void>) | undefined,
): () => Promise<void> | undefined {
  if (drain === undefined) return resume;
  return () => {
    const resumed = resume();
    return resumed === undefined ? drain() : resumed.then(drain);
  };
}

/**
 * Feeds `upstream`'s server-sent events to `onEvent` as they arrive, runs `afterFeed` (top-ups of parked events,
 * the output guard's turn) after each piece and waits for it when it returns a promise, writes what the relay wrote to `out` for that piece in one write (the piece's own bytes when it
 * went out unchanged, {@link PieceWriter}), and stops when the client left or `stopped()` says so.
 * Backpressure: while `res` needs draining, reading pauses ({@link waitForClient}, client-flow.ts).
 * @param clientIdleTimeoutMs how long the client may take nothing while reading pauses, ms.
 * @throws ClientIdleTimeoutError when it took nothing for that long; what reading the upstream throws.
 */
export async function readEvents(
  upstream: AsyncIterable<Buffer>,
  res: ServerResponse,
  out: PieceWriter,
  onEvent: (event: EventSourceMessage) => void,
  afterFeed: () => Promise<void> | undefined,
  stopped: () => boolean,
  clientIdleTimeoutMs: number,
): Promise<void> {
  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  /** Every piece so far was whole UTF-8 (the decoder holds no partial character). */
  let whole = true;
  let first = true;
  for await (const piece of upstream) {
    if (res.destroyed) break;
    const text = decoder.decode(piece, { stream: true });
    // The decoded text is the piece's bytes exactly when the piece is whole UTF-8 and no BOM was dropped.
    whole = whole && isUtf8(piece);
    const exact = whole && !(first && piece[0] === 0xef);
    first = false;
    out.hold();
    try {
      parser.feed(text);
      const after = afterFeed();
      if (after !== undefined) await after;
    } finally {
      if (exact) out.release(piece, text);
      else out.release();
    }
    if (stopped()) break;
    // Only a client that needs draining is waited for: no promise, no microtask, for one that keeps up.
    if (mustWait(res)) await waitForClient(res, clientIdleTimeoutMs);
  }
}
