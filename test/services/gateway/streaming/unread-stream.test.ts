/**
 * A client that does not read its stream (issue 28, item 7): the gateway stops reading the upstream instead of
 * buffering (the fake upstream sees its writes blocked, the gateway's response holds at most 1 MiB), waits for a
 * slow reader without piling up listeners, and after `stream_client_idle_timeout` without progress closes the
 * client's connection, aborts the upstream and books what was relayed (499 `client_idle_timeout`), on the
 * chat relay and on the native Messages relay. The clients are raw sockets that are paused (fetch reads ahead).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessAdmitter } from "../../../../services/gateway/src/limits/memory-admitter.js";
import type { Admitter, SettledUsage } from "../../../../services/gateway/src/limits/types.js";
import type { CallResult } from "../../../../services/gateway/src/pipeline/types.js";
import { MAX_HELD_BYTES } from "../../../../services/gateway/src/streaming/client-flow.js";
import { systemClock } from "../../../../services/gateway/src/time/clock.js";
import { type FakeAnthropic, startFakeAnthropic } from "../../../fixtures/anthropic-messages.js";
import {
  type MisbehavingUpstream,
  startMisbehavingUpstream,
} from "../../../fixtures/misbehaving-upstream.js";
import { waitFor } from "../../../helpers/redis.js";
import { openUnreadStream, type UnreadStream } from "../../../helpers/unread-stream.js";
import {
  type ChatHarness,
  type ChatHarnessOptions,
  rowsRecorder,
  startChatHarness,
  VIRTUAL_KEY,
} from "../endpoints/chat-completions/harness.js";
import { keySubject } from "../limits/subjects.js";

let upstream: MisbehavingUpstream;
let anthropic: FakeAnthropic;
const open: ChatHarness[] = [];
const clients: UnreadStream[] = [];

beforeAll(async () => {
  upstream = await startMisbehavingUpstream();
  anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" });
});
afterAll(async () => {
  for (const client of clients) client.socket.destroy();
  await Promise.all(open.map((h) => h.close()));
  await upstream.close();
  await anthropic.close();
});

/** An admitter that records how each admission ended (settled with what, or released). */
function recordingAdmitter(): Admitter & { settled: SettledUsage[]; released: number } {
  const inner = new InProcessAdmitter({ clock: systemClock });
  const record = {
    settled: [] as SettledUsage[],
    released: 0,
    admit: async (request: Parameters<Admitter["admit"]>[0]) => {
      const admission = await inner.admit(request);
      return {
        settle: (usage: SettledUsage) => {
          record.settled.push(usage);
          admission.settle(usage);
        },
        release: () => {
          record.released++;
          admission.release();
        },
        extend: (cost: number) => admission.extend(cost),
      };
    },
  };
  return record;
}

/** A harness with a budgeted key, the calls' results and spend rows, and the gateway's sockets and responses. */
async function harness(options: Partial<ChatHarnessOptions> & { upstreamUrl: string }) {
  const results: CallResult[] = [];
  const spend = rowsRecorder();
  const admitter = recordingAdmitter();
  const h = await startChatHarness({
    subjects: [keySubject({ maxBudget: 1000, alias: "unread" })],
    spend,
    admitter,
    observers: [{ onCallFinished: (_call, result) => results.push(result) }],
    ...options,
  });
  open.push(h);
  const sockets: Socket[] = [];
  const responses: ServerResponse[] = [];
  h.app.server.on("connection", (socket: Socket) => sockets.push(socket));
  h.app.server.on("request", (_req: IncomingMessage, res: ServerResponse) => responses.push(res));
  return { h, results, spend, admitter, sockets, responses };
}

const chatBody = {
  model: "general",
  messages: [{ role: "user", content: "Write forever." }],
  stream: true,
  max_tokens: 50_000_000,
};

async function unreadChat(h: ChatHarness): Promise<UnreadStream> {
  const client = await openUnreadStream(
    h.url,
    "/v1/chat/completions",
    { authorization: `Bearer ${VIRTUAL_KEY}` },
    chatBody,
  );
  clients.push(client);
  return client;
}

/** 4,000,000 tokens in chunks of 50: about 36 MB of events, far more than any socket buffer holds. */
const LONG = { kind: "long", tokens: 4_000_000, perChunk: 50, usage: false } as const;
const LONG_BYTES = (LONG.tokens / LONG.perChunk) * 450;

/**
 * Waits until the upstream's stream is held back for good: its write blocked and nothing more written over five
 * polls 100 ms apart (the sockets' buffers fill in steps, so the first blocked write is not the last).
 */
async function waitForHeldBack(): Promise<void> {
  let last = -1;
  let steady = 0;
  await waitFor(
    "the upstream's writes to stay blocked",
    () => {
      const now = upstream.long.bytesWritten;
      steady = upstream.long.blocked === 1 && now === last ? steady + 1 : 0;
      last = now;
      return steady >= 5;
    },
    15_000,
    100,
  );
}

describe("a client that does not read its stream", () => {
  // A regression guard: the relay already waited for drain before client-flow.ts; this keeps it so.
  it("holds the upstream back: its writes block, and the gateway keeps at most 1 MiB for the client", async () => {
    upstream.behave(LONG);
    const { h, sockets } = await harness({ upstreamUrl: upstream.url });
    const before = upstream.long.bytesWritten;
    const client = await unreadChat(h);
    await waitForHeldBack();
    const written = upstream.long.bytesWritten - before;
    // What the upstream could write is what the sockets' kernel buffers took, not the 36 MB it has to send.
    expect(written).toBeLessThan(LONG_BYTES / 2);
    const served = sockets.find((s) => s.bytesWritten > 0);
    expect(served?.writableLength ?? 0).toBeLessThanOrEqual(MAX_HELD_BYTES);
    const closed = upstream.long.closedEarly;
    client.socket.destroy();
    await waitFor("the upstream to see the call end", () => upstream.long.closedEarly === closed + 1);
  });

  it("waits for a slow reader without adding a listener per wait", async () => {
    const { h, responses, results } = await harness({ upstreamUrl: upstream.url });
    upstream.behave({ ...LONG, tokens: 200_000_000 });
    const client = await unreadChat(h);
    await waitFor("the upstream's writes to block", () => upstream.long.blocked === 1, 15_000);
    let drains = 0;
    responses.at(-1)!.on("drain", () => drains++);
    let read = 0;
    for (let i = 0; i < 30; i++) {
      read += await client.sip(5);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(read).toBeGreaterThan(0);
    const res = responses.at(-1)!;
    expect(results).toEqual([]); // still streaming
    // The relay did wait for this client, many times: each sip let the response drain.
    expect(drains).toBeGreaterThanOrEqual(5);
    expect(res.listenerCount("close")).toBeLessThan(5);
    const closed = upstream.long.closedEarly;
    client.socket.destroy();
    await waitFor("the upstream to see the call end", () => upstream.long.closedEarly === closed + 1);
  });

  it("after stream_client_idle_timeout, closes the client, aborts the upstream and books what was relayed", async () => {
    upstream.behave(LONG);
    const { h, results, spend, admitter, sockets } = await harness({
      upstreamUrl: upstream.url,
      clientIdleTimeoutMs: 300,
    });
    const closedBefore = upstream.long.closedEarly;
    await unreadChat(h);
    await waitFor("the gateway to close the connection", () => sockets[0]?.destroyed === true, 10_000);
    await waitFor("the upstream aborted", () => upstream.long.closedEarly === closedBefore + 1);
    await waitFor("the call booked", () => results.length === 1 && spend.rows.length === 1);
    expect(results[0]?.status).toBe(499);
    expect(results[0]?.errorType).toBe("client_idle_timeout");
    const row = spend.rows[0]!;
    expect(row.status).toBe(499);
    expect(row.stream).toBe(true);
    // What was relayed before the client stopped reading: at least one chunk, far from the whole answer.
    expect(row.completionTokens).toBeGreaterThanOrEqual(LONG.perChunk);
    expect(row.completionTokens).toBeLessThan(LONG.tokens / 2);
    expect(row.spend).toBeGreaterThan(0);
    expect(admitter.settled).toEqual([{ cost: row.spend, totalTokens: row.totalTokens }]);
    expect(admitter.released).toBe(0);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(
      /^litellm_proxy_failed_requests_metric_total\{[^}]*exception_class="client_idle_timeout"[^}]*\} 1$/m,
    );
  });

  it("ends a native Messages stream the same way", async () => {
    anthropic.misbehaveNextStream({ kind: "long", words: 3_000_000 });
    const { h, results, spend, admitter, sockets } = await harness({
      upstreamUrl: anthropic.url,
      upstreamModel: "anthropic/claude-haiku-4-5",
      extraParams: "      api_key: sk-ant-upstream\n",
      clientIdleTimeoutMs: 300,
    });
    const client = await openUnreadStream(
      h.url,
      "/v1/messages",
      { "x-api-key": VIRTUAL_KEY, "anthropic-version": "2023-06-01" },
      {
        model: "general",
        stream: true,
        max_tokens: 50_000_000,
        messages: [{ role: "user", content: "Write forever." }],
      },
    );
    clients.push(client);
    await waitFor("the gateway to close the connection", () => sockets[0]?.destroyed === true, 10_000);
    await waitFor("the call booked", () => results.length === 1 && spend.rows.length === 1);
    expect(results[0]?.status).toBe(499);
    expect(results[0]?.errorType).toBe("client_idle_timeout");
    const row = spend.rows[0]!;
    expect(row.completionTokens).toBeGreaterThan(0);
    expect(admitter.settled).toEqual([{ cost: row.spend, totalTokens: row.totalTokens }]);
    // The upstream was held back, then aborted: it never wrote its whole answer.
    const sent = anthropic.longDeltasSent;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(anthropic.longDeltasSent).toBe(sent);
    expect(sent).toBeLessThan(3_000_000);
  });
});
