/**
 * Load generators of the benchmark, all run in the benchmark's own process:
 *
 * - {@link pacedLoad}: open-loop constant rate over an undici Pool. Request i is issued at t0 + i/rate whether or
 *   not earlier ones have answered, so a slow server cannot slow the generator down (no coordinated omission);
 *   latency runs from the moment the request is issued (including waiting for a pooled connection) to the
 *   last byte of the answer. The schedule lag (issue time − planned time) is reported so a generator that
 *   fell behind is visible.
 * - {@link cannon}: autocannon (closed loop): saturation throughput, and `overallRate` fixed-rate runs. Note
 *   autocannon paces `overallRate` per connection per second (httpClient.js: each connection sends its share
 *   back to back, then pauses until the next one-second tick), so its "fixed rate" arrives in bursts.
 * - {@link streamTiming}: streamed completions, time to the first SSE byte and to the end, sequential and
 *   concurrent.
 *
 * Latencies are recorded per request as floating-point ms (autocannon's own histogram has 1 ms resolution).
 */
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { Pool } from "undici";
import { median, type Summary, summarize } from "./stats.js";

const answered = new Map<string, number>();

/** Requests each target has answered so far in this process (any status), by target name: CPU cost per request. */
export function answeredCounts(): Record<string, number> {
  return Object.fromEntries(answered);
}

/** Adds `count` answered requests to `target`'s tally ({@link answeredCounts}), for loads run outside this module. */
export function tally(target: Target, count: number): void {
  answered.set(target.name, (answered.get(target.name) ?? 0) + count);
}

/** One server under test and how to call its chat-completions endpoint. */
export interface Target {
  /** Short name: upstream, passthrough, gateway. */
  name: string;
  /** http://127.0.0.1:<port> */
  origin: string;
  /** Path of chat completions, e.g. /v1/chat/completions. */
  path: string;
  /** Request headers (content-type, authorization). */
  headers: Record<string, string>;
  /** The `model` to send. */
  model: string;
  /**
   * Bearer tokens to spread the requests over (the distinct-keys scaling runs): each request takes the next one,
   * round robin, instead of the `authorization` in `headers`.
   */
  tokens?: string[];
}

const cursors = new WeakMap<string[], number>();

/** The headers of the next request to `target`: its own, with the next of its {@link Target.tokens} if it has some. */
export function nextHeaders(target: Target): Record<string, string> {
  const tokens = target.tokens;
  if (tokens === undefined || tokens.length === 0) return target.headers;
  const i = cursors.get(tokens) ?? 0;
  cursors.set(tokens, (i + 1) % tokens.length);
  return { ...target.headers, authorization: `Bearer ${tokens[i]}` };
}

/** The non-streamed request body every load uses: a short chat turn. */
export function completionBody(model: string): string {
  return JSON.stringify({ model, messages: [{ role: "user", content: "hello bench" }], max_tokens: 16 });
}

/** The streamed request body. */
export function streamBody(model: string): string {
  return JSON.stringify({
    model,
    messages: [{ role: "user", content: "hello bench" }],
    max_tokens: 16,
    stream: true,
    stream_options: { include_usage: true },
  });
}

/** Outcome of one load run. Latencies in ms. */
export interface LoadResult {
  target: string;
  /** Seconds the run lasted. */
  seconds: number;
  /** 2xx answers. */
  ok: number;
  /** Answers with another status. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** 2xx answers per second. */
  rps: number;
  latency: Summary;
}

/** Result of a paced run: plus the generator's schedule lag. */
export interface PacedResult extends LoadResult {
  rate: number;
  lag: Summary;
}

/**
 * Open-loop constant-rate load.
 * @param rate requests per second; `seconds` of load, then waits (at most 10 s) for the stragglers.
 */
export async function pacedLoad(
  target: Target,
  {
    rate,
    seconds,
    connections = 64,
    body = completionBody(target.model),
  }: { rate: number; seconds: number; connections?: number; body?: string },
): Promise<PacedResult> {
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const latencies = new Float64Array(total);
  const lags = new Float64Array(total);
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let outstanding = 0;
  let issued = 0;
  const start = performance.now();
  let allIssued!: () => void;
  const done = new Promise<void>((resolve) => {
    allIssued = resolve;
  });
  let drained: (() => void) | undefined;

  const fire = async (at: number) => {
    outstanding++;
    try {
      const res = await pool.request({
        path: target.path,
        method: "POST",
        headers: nextHeaders(target),
        body,
      });
      await res.body.text();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        latencies[ok++] = performance.now() - at;
      } else {
        non2xx++;
      }
    } catch {
      errors++;
    } finally {
      outstanding--;
      if (outstanding === 0) drained?.();
    }
  };

  const tick = () => {
    const now = performance.now();
    while (issued < total && start + issued * interval <= now) {
      lags[issued] = now - (start + issued * interval);
      void fire(now);
      issued++;
    }
    if (issued < total) setTimeout(tick, Math.max(0, start + issued * interval - performance.now()));
    else allIssued();
  };
  tick();
  await done;
  if (outstanding > 0) {
    await Promise.race([
      new Promise<void>((resolve) => {
        drained = resolve;
      }),
      new Promise<void>((resolve) => setTimeout(resolve, 10_000)),
    ]);
  }
  const elapsed = (performance.now() - start) / 1000;
  await pool.destroy();
  tally(target, ok + non2xx);
  return {
    target: target.name,
    rate,
    seconds: elapsed,
    ok,
    non2xx,
    errors,
    rps: ok / elapsed,
    latency: summarize(latencies.subarray(0, ok)),
    lag: summarize(lags.subarray(0, issued)),
  };
}

/**
 * An autocannon run: closed loop with `connections` (saturation) or, with `overallRate`, autocannon's own
 * per-second pacing. `body` defaults to {@link completionBody}.
 */
export function cannon(
  target: Target,
  {
    seconds,
    connections,
    overallRate,
    body = completionBody(target.model),
  }: { seconds: number; connections: number; overallRate?: number; body?: string },
): Promise<LoadResult> {
  const samples: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${target.origin}${target.path}`,
        method: "POST",
        headers: target.headers,
        body,
        ...(target.tokens === undefined
          ? {}
          : {
              requests: [
                {
                  setupRequest: (req: autocannon.Request) => ({ ...req, headers: nextHeaders(target) }),
                },
              ],
            }),
        connections,
        duration: seconds,
        ...(overallRate === undefined ? {} : { overallRate }),
        timeout: 10,
      },
      (error, result) => {
        if (error) return reject(error);
        const ok = result["2xx"];
        tally(target, ok + result.non2xx);
        resolve({
          target: target.name,
          seconds: result.duration,
          ok,
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
          rps: ok / result.duration,
          latency: summarize(samples),
        });
      },
    );
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) samples.push(responseTime);
    });
  });
}

/** Time to first byte and to the end of streamed completions, ms. */
export interface StreamResult {
  target: string;
  /** Sequential: one stream at a time on a kept-alive connection. */
  sequentialTtft: Summary;
  sequentialTotal: Summary;
  /** `concurrency` streams at once, `waves` times. */
  concurrentTtft: Summary;
  concurrency: number;
  failures: number;
}

/**
 * One streamed completion on `pool`: ms from issuing to the first byte (`ttft`) and to the end (`total`), or
 * undefined when it failed (not 200, not SSE, no `[DONE]`, or a connection error).
 */
export async function timeStream(
  pool: Pool,
  target: Target,
  body: string,
): Promise<{ ttft: number; total: number } | undefined> {
  const start = performance.now();
  try {
    const res = await pool.request({ path: target.path, method: "POST", headers: nextHeaders(target), body });
    let ttft: number | undefined;
    let text = "";
    for await (const chunk of res.body) {
      ttft ??= performance.now() - start;
      text += (chunk as Buffer).toString("utf8");
    }
    const total = performance.now() - start;
    const done = text.includes("[DONE]");
    if (res.statusCode !== 200 || !text.startsWith("data: ") || !done || ttft === undefined) return undefined;
    return { ttft, total };
  } catch {
    return undefined;
  }
}

/** Sends streamed completions and times the first SSE byte at the client. */
export async function streamTiming(
  target: Target,
  { sequential, concurrency, waves }: { sequential: number; concurrency: number; waves: number },
): Promise<StreamResult> {
  const pool = new Pool(target.origin, { connections: Math.max(concurrency, 1), keepAliveTimeout: 60_000 });
  const body = streamBody(target.model);
  let failures = 0;
  const one = async () => {
    const r = await timeStream(pool, target, body);
    if (r === undefined) failures++;
    return r;
  };
  const seqTtft: number[] = [];
  const seqTotal: number[] = [];
  for (let i = 0; i < sequential; i++) {
    const r = await one();
    if (r) {
      seqTtft.push(r.ttft);
      seqTotal.push(r.total);
    }
  }
  const concTtft: number[] = [];
  for (let w = 0; w < waves; w++) {
    const results = await Promise.all(Array.from({ length: concurrency }, one));
    for (const r of results) if (r) concTtft.push(r.ttft);
  }
  await pool.close();
  tally(target, sequential + concurrency * waves - failures);
  return {
    target: target.name,
    sequentialTtft: summarize(seqTtft),
    sequentialTotal: summarize(seqTotal),
    concurrentTtft: summarize(concTtft),
    concurrency,
    failures,
  };
}

/** One request, checked: throws with the status and body when the target does not answer a completion. */
export async function checkTarget(target: Target, stream: boolean): Promise<void> {
  const res = await fetch(`${target.origin}${target.path}`, {
    method: "POST",
    headers: target.headers,
    body: stream ? streamBody(target.model) : completionBody(target.model),
  });
  const text = await res.text();
  tally(target, 1);
  const good = stream ? text.includes("data: [DONE]") : text.includes('"chat.completion"');
  if (res.status !== 200 || !good) {
    throw new Error(
      `${target.name} did not answer a ${stream ? "streamed " : ""}completion: ${res.status} ${text.slice(0, 300)}`,
    );
  }
}

/** Several rounds of one paced measurement: medians of the per-round figures, with the rounds kept. */
export interface PacedRow extends PacedResult {
  rounds: PacedResult[];
}

/**
 * Merges rounds of the same (target, rate): p50/p90/p99 and req/s are medians of the rounds' values (robust to
 * one round hit by a neighbour's CPU burst), counts are sums, max is the maximum.
 */
export function mergeRounds(rounds: PacedResult[]): PacedRow {
  const first = rounds[0];
  if (first === undefined) throw new Error("mergeRounds: no rounds");
  const merge = (pick: (r: PacedResult) => Summary): Summary => ({
    count: rounds.reduce((n, r) => n + pick(r).count, 0),
    p50: median(rounds.map((r) => pick(r).p50)),
    p90: median(rounds.map((r) => pick(r).p90)),
    p99: median(rounds.map((r) => pick(r).p99)),
    max: Math.max(...rounds.map((r) => pick(r).max)),
    mean: median(rounds.map((r) => pick(r).mean)),
  });
  return {
    target: first.target,
    rate: first.rate,
    seconds: rounds.reduce((n, r) => n + r.seconds, 0),
    ok: rounds.reduce((n, r) => n + r.ok, 0),
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    rps: median(rounds.map((r) => r.rps)),
    latency: merge((r) => r.latency),
    lag: merge((r) => r.lag),
    rounds,
  };
}
