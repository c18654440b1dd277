/**
 * The seam between the request path and budgets / rate limits. The chat route asks an {@link Admitter} to
 * admit a call before it goes upstream and settles the admission with the real usage afterwards.
 */

/** A holder of budgets and rate limits: a virtual key, a user, a team, or a user's membership of a team. */
export interface LimitSubject {
  scope: "key" | "user" | "team" | "team_member";
  /**
   * Key hash (scope key), user_id (scope user), team_id (scope team), or the membership's `member_key`, JSON
   * `[team_id, user_id]` (scope team_member).
   */
  id: string;
  /** Requests per minute, or null for unlimited. */
  rpmLimit: number | null;
  /** Tokens (prompt + completion) per minute, or null for unlimited. */
  tpmLimit: number | null;
  /**
   * Calls of this subject in flight at once, on all instances together (LiteLLM's `max_parallel_requests`), or
   * null / absent for unlimited.
   */
  maxParallelRequests?: number | null;
  /** Budget in USD for the current period, or null for unlimited. */
  maxBudget: number | null;
  /** Budget period in LiteLLM's duration syntax (`30s`, `30m`, `30h`, `30d`), or null for a lifetime budget. */
  budgetDuration: string | null;
  /** When the current period ends, epoch ms, or null. */
  budgetResetAt: number | null;
  /** USD spent in the current period as last read from the database. */
  spend: number;
  /**
   * Optional (added by the limits module): a display name for refusal messages, e.g. the key alias (scope key)
   * or the user's email (scope user). Never a key. When absent, messages name a key by its hash prefix and a
   * user by its id.
   */
  alias?: string | null;
}

/** What the route knows before the upstream call. */
export interface AdmissionRequest {
  /** The subjects to check: `VirtualKeyAuth.subjects` (empty for the master key). */
  subjects: LimitSubject[];
  /** The requested model alias. */
  model: string;
  /** Estimated cost in USD, reserved against budgets until settled. */
  estimatedCost: number;
  /** Estimated tokens (prompt estimate + max_tokens). */
  estimatedTokens: number;
}

/** Actual usage of an admitted call. */
export interface SettledUsage {
  /** USD. */
  cost: number;
  /** prompt_tokens + completion_tokens. */
  totalTokens: number;
}

/** What {@link Admission.extend} answered. */
export type Extension =
  | { granted: true }
  /** `available`: USD the budgets that refused could still reserve (0 when unknown, e.g. Redis not answering). */
  | { granted: false; available: number };

/** A call that was let through; must be settled or released exactly once (extra calls are ignored). */
export interface Admission {
  /** Replaces the reservation by the real cost (every extension included) and counts the tokens. */
  settle(usage: SettledUsage): void;
  /** Drops the reservation without spending (the call never reached an upstream). */
  release(): void;
  /**
   * Reserves `cost` USD more for this call against the same budgets (a top-up: a stream past its reservation),
   * atomically across instances and checked like an admission's budget (`spent + reserved + cost <= max_budget`;
   * rpm and tpm are not counted again). What is granted is held with the call's reservation until it is settled
   * or released. Never throws; resolves `{granted: false}` once the call is settled or released, or when the
   * limit store cannot say (Redis not answering): a top-up is never granted blindly.
   */
  extend(cost: number): Promise<Extension>;
}

export interface Admitter {
  /**
   * Checks rate limits and budgets for every subject and reserves the estimated cost.
   * @throws GatewayError 429 `rate_limit_error` with `retry-after` (seconds) when a rpm/tpm limit is reached;
   *   429 `budget_exceeded` naming the budget (key or user), its amount, the spend and when it resets.
   */
  admit(request: AdmissionRequest): Promise<Admission>;
}
