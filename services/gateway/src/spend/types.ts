import type { UsageBreakdown } from "../usage/types.js";

/** One row of the spend log: one request through the gateway. */
export interface SpendLogRow {
  /** Unique request id (also the `x-request-id`/response `id` correlation); idempotency key for writes. */
  requestId: string;
  /** SHA-256 hex of the virtual key, or null for the master key. */
  keyHash: string | null;
  keyAlias: string | null;
  userId: string | null;
  /**
   * The key's team (LiteLLM's spend log `team_id`), or null; absent in rows spooled before teams. A team key's
   * spend is booked on the team and the member's budget in the team, not on the user's personal budget.
   */
  teamId?: string | null;
  /** The model alias the client asked for (LiteLLM's `model_group`). */
  modelGroup: string;
  /** `provider/upstream-model` of the deployment that answered. */
  model: string;
  deploymentId: string | null;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** USD. */
  spend: number;
  /** Epoch ms. */
  startTime: number;
  endTime: number;
  /** HTTP status returned to the client. */
  status: number;
  stream: boolean;
  /** LiteLLM's `call_type` (`acompletion`, `aembedding`, …); `acompletion` when absent (rows spooled before it existed). */
  callType?: string;
  /**
   * Why the call failed or was refused (the `reason` column): the OpenAI error type, or the gateway's finer name
   * (`guardrail_violation`, `key_model_access_denied`); absent or null for an answered call.
   */
  reason?: string | null;
  /** How the tokens divide by price (the `usage_details` column), when the upstream reported its usage. */
  usageDetails?: UsageBreakdown;
  /**
   * The answer came from the response cache (LiteLLM's `cache_hit` column): `spend` is 0 and `cacheSavedSpend`
   * what the call cost when it was first answered, USD. Absent: not a hit.
   */
  cacheHit?: boolean;
  /** The response cache's key of the call (LiteLLM's `cache_key`), when it was looked up or stored. */
  cacheKey?: string;
  /** USD a cache hit saved. */
  cacheSavedSpend?: number;
}

/** Takes spend rows off the hot path; implementations batch the writes. */
export interface SpendRecorder {
  /** Queues one row; never throws, never blocks on I/O. */
  record(row: SpendLogRow): void;
  /** Writes everything queued; resolves when done or when `timeoutMs` passed (rows stay queued). */
  flush(timeoutMs?: number): Promise<void>;
}
