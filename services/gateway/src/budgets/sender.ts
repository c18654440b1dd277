/**
 * Delivers `budget_events` rows (see `warnings.ts`) to `BUDGET_WEBHOOK_URL`: each instance runs one sender;
 * a pass claims due rows with `FOR UPDATE SKIP LOCKED` (so two instances never send the same row at once),
 * POSTs each as JSON, marks it delivered on a 2xx answer and otherwise schedules the next attempt with
 * exponential backoff (`initialBackoffMs` doubling up to `maxBackoffMs`) until `maxAttempts`. Rows live in
 * Postgres, so a restart loses nothing; delivery is at least once per row and, with the claim held while
 * posting, exactly once unless an instance dies between the receiver's 2xx and the commit.
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import { withTransaction } from "../db/transaction.js";
import type { BudgetEventPayload } from "./warnings.js";

export interface BudgetSenderOptions {
  pool: pg.Pool;
  /** The receiver (e.g. a Slack incoming webhook). Never logged: it may carry a secret. */
  url: string;
  log: FastifyBaseLogger;
  /** Rows per pass. Default 20. */
  batchSize?: number;
  /** Per-request timeout, ms. Default 5000. */
  timeoutMs?: number;
  /** Default 1000 (doubling per failed attempt). */
  initialBackoffMs?: number;
  /** Default 3 600 000 (one hour). */
  maxBackoffMs?: number;
  /** Attempts after which a row is given up (kept, never sent again). Default 12. */
  maxAttempts?: number;
  /** Time between passes of {@link startBudgetSender}, ms. Default 5000. */
  intervalMs?: number;
}

/** The webhook body: the stored payload plus a one-line `text` (shown by Slack's incoming webhooks). */
export function webhookBody(payload: BudgetEventPayload): BudgetEventPayload & { text: string } {
  const who =
    payload.scope === "key"
      ? `Key ${payload.key_alias ?? "(no alias)"}`
      : payload.scope === "team"
        ? `Team ${payload.team_alias ?? payload.team_id}`
        : `User ${payload.user}`;
  const pct = Math.round(payload.threshold * 100);
  const state = payload.threshold >= 1 ? "budget exhausted" : `${pct}% of budget reached`;
  const end = payload.period_end === null ? "" : `; period ends ${payload.period_end}`;
  const text = `${who}: ${state} — spent $${payload.spend} of $${payload.budget}${end}`;
  return { ...payload, text };
}

/**
 * One pass: claims up to `batchSize` due rows, posts them, records the outcome.
 * @returns how many were delivered. @throws the database error (the caller's loop logs it and retries).
 */
export async function sendDueBudgetEvents(options: BudgetSenderOptions): Promise<number> {
  const initial = options.initialBackoffMs ?? 1000;
  const max = options.maxBackoffMs ?? 3_600_000;
  const maxAttempts = options.maxAttempts ?? 12;
  return withTransaction(options.pool, async (client) => {
    const due = await client.query<{
      scope: string;
      scope_id: string;
      period_start: Date;
      threshold: string;
      attempts: number;
      payload: BudgetEventPayload;
    }>(
      `SELECT scope, scope_id, period_start, threshold, attempts, payload FROM budget_events
       WHERE delivered_at IS NULL AND attempts < $1 AND next_attempt_at <= now()
       ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [maxAttempts, options.batchSize ?? 20],
    );
    let delivered = 0;
    for (const row of due.rows) {
      const error = await post(options.url, webhookBody(row.payload), options.timeoutMs ?? 5000);
      const key = [row.scope, row.scope_id, row.period_start, row.threshold];
      if (error === null) {
        delivered += 1;
        await client.query(
          `UPDATE budget_events SET delivered_at = now(), attempts = attempts + 1, last_error = NULL
           WHERE scope = $1 AND scope_id = $2 AND period_start = $3 AND threshold = $4`,
          key,
        );
        continue;
      }
      const backoffMs = Math.min(initial * 2 ** row.attempts, max);
      await client.query(
        `UPDATE budget_events SET attempts = attempts + 1, last_error = $5,
           next_attempt_at = now() + make_interval(secs => $6::float8 / 1000)
         WHERE scope = $1 AND scope_id = $2 AND period_start = $3 AND threshold = $4`,
        [...key, error, backoffMs],
      );
      options.log.warn(
        {
          scope: row.scope,
          threshold: Number(row.threshold),
          attempt: row.attempts + 1,
          retryInMs: backoffMs,
          err: error,
        },
        row.attempts + 1 >= maxAttempts
          ? "budget webhook: giving up on event"
          : "budget webhook: delivery failed; will retry",
      );
    }
    return delivered;
  });
}

/** POSTs JSON; resolves null on 2xx, else a short reason (status or error name; never the URL). */
async function post(url: string, body: unknown, timeoutMs: number): Promise<string | null> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.ok ? null : `HTTP ${response.status}`;
  } catch (error) {
    return error instanceof Error ? error.name : "error";
  }
}

/**
 * Runs {@link sendDueBudgetEvents} every `intervalMs` (default 5000) until the returned stop function is
 * called (which waits for a pass in progress). Database errors are logged and the next pass retries.
 */
export function startBudgetSender(options: BudgetSenderOptions): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() =>
      sendDueBudgetEvents(options).catch((error: unknown) =>
        options.log.warn(
          { err: error instanceof Error ? error.message : String(error) },
          "budget webhook: pass failed",
        ),
      ),
    );
  }, options.intervalMs ?? 5000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
