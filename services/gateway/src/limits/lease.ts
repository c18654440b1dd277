/**
 * One subject's lease (docs/leases.md): its lifetimes, its shape, and the values a lease call is made from and
 * answered with. The book of leases is `leases.ts`; the Redis calls are `redis-admitter.ts`.
 */

import type { SubjectPlan } from "./rules.js";

/** Lifetime of a lease for its holder, ms of the gateway clock (and of wall time too): renewed or returned before. */
export const LEASE_TTL_MS = 5000;
/**
 * How long Redis keeps a lease's budget member (ms of the gateway clock) although its holder renews or returns it
 * within {@link LEASE_TTL_MS}: a holder whose event loop stalls (a starved CPU, a long GC pause) has calls in
 * flight and spend not yet settled, so its member must outlive the stall or another instance could admit the
 * same money again. The cost: a crashed instance's slice comes back after this long, not after 5 s.
 */
export const LEASE_HOLD_MS = 30_000;
/** A lease unused this long (clock or wall ms) is returned (and one call's slice kept, see {@link KEEP_IDLE_MS}). */
export const LEASE_IDLE_MS = 1000;
/**
 * A subject's slice kept between calls (one request, the last call's token estimate and its micro-USD estimate)
 * is given back once the subject has had no call here for this long (clock or wall ms); until then it is renewed
 * in the sweep (after a call, at a window's rollover) and the next call takes no round trip.
 */
export const KEEP_IDLE_MS = 60_000;
/**
 * How much longer than its holder's lifetime Redis keeps a budget member (ms): the stall margin of
 * {@link LEASE_HOLD_MS}, for kept slices too. A kept slice lives at most {@link KEEP_IDLE_MS} after its
 * subject's last call for its holder, so a crashed instance's kept slice is reclaimed at most
 * `KEEP_IDLE_MS + HOLD_MARGIN_MS` (85 s) after that call.
 */
export const HOLD_MARGIN_MS = LEASE_HOLD_MS - LEASE_TTL_MS;
/** A lease stops admitting and is returned this long (ms) before it expires. */
export const LEASE_RENEW_BEFORE_MS = 1500;
/** Demand (calls admitted per subject) is measured over this span, ms of wall time. */
export const DEMAND_SPAN_MS = 2000;

/** One subject's lease; see the module comment. Amounts in requests, tokens and micro-USD. */
export interface Lease {
  readonly counterId: string;
  /** The plan of the last call or return: limits, period, floor. */
  plan: SubjectPlan;
  /** rpm/tpm window the requests and room belong to. */
  window: number;
  requests: number;
  requestsUsed: number;
  /** Token room held in Redis. */
  tokens: number;
  /** Tokens settled since the last return. */
  tokensUsed: number;
  /** Budget lease member in Redis (`<id>:<held>`), '' when none. */
  member: string;
  /** Period (`plan.period`) the member belongs to. */
  memberPeriod: string;
  held: number;
  /** Estimates of calls in flight. */
  reserved: number;
  /** Costs settled since the last return. */
  spent: number;
  /** Clock ms when the lease expires for its holder (its member lives {@link HOLD_MARGIN_MS} longer in Redis). */
  expiresAt: number;
  /** Lifetime of the current grant for its holder, ms ({@link LEASE_TTL_MS}, longer for a kept slice). */
  ttl: number;
  /** performance.now() when taken. */
  takenAtWall: number;
  /** A slice kept between calls that no call has used yet: given back only after {@link KEEP_IDLE_MS} idle. */
  kept: boolean;
  /** Estimate (micro-USD) and estimated tokens of the last call admitted from the lease; -1 before any. */
  lastEstimate: number;
  lastTokens: number;
  lastUsed: number;
  lastUsedWall: number;
  /** Limits changed or the key/user was revoked: return, admit nothing more from it. */
  dropped: boolean;
  /**
   * A return or renewal in flight (no call admits from the lease meanwhile); resolves with its refusal, if
   * Redis refused it.
   */
  busy: Promise<LeaseRefusal | undefined> | undefined;
  /** Calls waiting for `busy`. */
  waiting: number;
  /** Calls admitted since `demandSince` (wall ms). */
  demand: number;
  demandSince: number;
  /** Calls per ms over the previous span (so a new span does not start from nothing). */
  previousRate: number;
}

/**
 * Redis refused a lease for a call: the subject and limit that refused, the call's estimate (micro-USD), and the
 * refusal as a call of `estimate` would get it now. Calls that waited for that lease call and do not fit the
 * leases get it too, instead of one more round trip each to hear the same answer.
 */
export interface LeaseRefusal {
  counterId: string;
  kind: "rpm" | "tpm" | "budget";
  estimate: number;
  refuse(estimate: number): Error;
}

/** Whether a call of `estimate` micro-USD on `plans` that waited for a refused lease call is refused the same. */
export function sharesRefusal(refusal: LeaseRefusal, plans: SubjectPlan[], estimate: number): boolean {
  if (refusal.kind === "budget" && estimate < refusal.estimate) return false;
  return plans.some((plan) => plan.counterId === refusal.counterId);
}

/** What was sent for one subject in a lease call: the snapshot that the reply (or its undo) is applied to. */
export interface LeaseSnapshot {
  lease: Lease;
  plan: SubjectPlan;
  index: number;
  returned: number;
  tokensUsed: number;
  tokenDelta: number;
  oldMember: string;
  oldAmount: number;
  oldPeriod: string;
  spent: number;
  carry: number;
  newId: string;
  wantRequests: number;
  wantTokens: number;
  wantBudget: number;
  estimate: number;
  /** A slice kept between calls is asked for (`LEASE_LUA` admit mode 3). */
  keep: boolean;
  /** Lifetime of the grant for its holder, ms; its member expires `ttl + HOLD_MARGIN_MS` after the call. */
  ttl: number;
}

/** Whether `lease` was taken under the same limits and budget period as `plan`. */
export const sameLimits = (lease: Lease, plan: SubjectPlan) =>
  lease.plan === plan ||
  (lease.plan.rpm === plan.rpm &&
    lease.plan.tpm === plan.tpm &&
    lease.plan.maxMicros === plan.maxMicros &&
    lease.plan.period === plan.period);

/**
 * What a lease call is taken for: a call of `estimate` micro-USD and `tokens` tokens, or (`topUp`) more budget for
 * a call in flight (`estimate`: the top-up), which needs no request and no token room.
 */
export interface Want {
  estimate: number;
  tokens: number;
  topUp?: boolean;
}

/** A call admitted from leases whose estimate is still reserved on them. */
export interface InFlight {
  plans: SubjectPlan[];
  /** micro-USD reserved on each of its subjects' leases: its estimate plus every top-up granted. */
  estimate: number;
  /** Clock ms of the admission. */
  at: number;
}
