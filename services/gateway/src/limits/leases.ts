/**
 * The local half of lease-based limits (docs/leases.md): the slices (leases) of each subject's rpm, tpm and
 * budget this instance holds, the calls admitted from them without any I/O, and the snapshots sent to Redis when
 * a lease is returned, renewed or kept between calls (`LEASE_LUA` in `scripts.ts`). The lease record and its
 * lifetimes are `lease.ts`; Redis round trips are `lease-calls.ts` and `redis-admitter.ts`; nothing here does
 * I/O.
 *
 * A lease per subject (`<scope>:<id>`) holds, in the units of `rules.ts`:
 * - requests counted in Redis for one rpm window, and how many of them this instance admitted;
 * - token room counted in Redis for that window, and the tokens settled against it since the last return;
 * - micro-USD held in Redis by one budget lease member, the estimates of calls in flight reserved from it, and
 *   the real costs settled since the last return.
 * A call fits when every subject's lease is valid (same limits, window and period as the call, not near its
 * expiry, not being renewed, not dropped) and has a request, a token of room and the call's estimate left.
 * Between calls a subject keeps at most one call's slice (docs/leases.md, "Keys used less often than a lease
 * lives"), given back after {@link KEEP_IDLE_MS} without a call.
 */

import {
  DEMAND_SPAN_MS,
  type InFlight,
  KEEP_IDLE_MS,
  LEASE_IDLE_MS,
  LEASE_RENEW_BEFORE_MS,
  LEASE_TTL_MS,
  type Lease,
  type LeaseSnapshot,
  sameLimits,
  type Want,
} from "./lease.js";
import {
  NOT_EXTENDED,
  onceAdmission,
  RESERVATION_TTL_MS,
  type SubjectPlan,
  settledAmounts,
  windowIndex,
} from "./rules.js";
import type { Admission, Extension } from "./types.js";

/** The leases of this instance, by subject. */
export class LeaseBook {
  readonly leases = new Map<string, Lease>();
  /** Calls in flight with a reservation, in admission order (so the oldest first). */
  private readonly inFlight = new Set<InFlight>();

  /**
   * @param reservationTtlMs after this many clock ms a call's reservation is reclaimed (it never settled).
   * @param idleMs a lease unused this long (clock or wall ms) is returned.
   * @param extend answers the top-ups of the calls it admits (`Admission.extend`), `extra` in micro-USD: the
   *   Redis admitter's ({@link LeaseBook.extendLocal}, then a lease call); by default none is granted.
   */
  constructor(
    private readonly reservationTtlMs = RESERVATION_TTL_MS,
    private readonly idleMs = LEASE_IDLE_MS,
    private readonly extend: (call: InFlight, extra: number) => Promise<Extension> = async () => NOT_EXTENDED,
  ) {}

  /** The subject's lease, created empty when there is none. */
  lease(plan: SubjectPlan): Lease {
    let lease = this.leases.get(plan.counterId);
    if (lease === undefined) {
      lease = {
        counterId: plan.counterId,
        plan,
        window: -1,
        requests: 0,
        requestsUsed: 0,
        tokens: 0,
        tokensUsed: 0,
        member: "",
        memberPeriod: plan.period,
        held: 0,
        reserved: 0,
        spent: 0,
        expiresAt: 0,
        ttl: LEASE_TTL_MS,
        takenAtWall: 0,
        kept: false,
        lastEstimate: -1,
        lastTokens: 0,
        lastUsed: 0,
        lastUsedWall: 0,
        dropped: false,
        busy: undefined,
        waiting: 0,
        demand: 0,
        demandSince: performance.now(),
        previousRate: 0,
      };
      this.leases.set(plan.counterId, lease);
    }
    return lease;
  }

  /** Whether the lease can admit a call now (see the module comment), ignoring amounts. */
  usable(lease: Lease, plan: SubjectPlan, now: number, wall: number): boolean {
    if (lease.busy !== undefined || lease.dropped || !sameLimits(lease, plan)) return false;
    if ((plan.rpm >= 0 || plan.tpm >= 0) && lease.window !== windowIndex(now)) return false;
    return (
      now < lease.expiresAt - LEASE_RENEW_BEFORE_MS &&
      wall < lease.takenAtWall + lease.ttl - LEASE_RENEW_BEFORE_MS
    );
  }

  /**
   * The call's admission from the local leases, or undefined when any subject's lease does not cover it.
   * `estimate` in micro-USD, `tokens` the call's estimated tokens (what a slice kept for the subject holds).
   */
  tryAdmit(plans: SubjectPlan[], estimate: number, now: number, tokens = 0): Admission | undefined {
    const wall = performance.now();
    for (const plan of plans) {
      const lease = this.leases.get(plan.counterId);
      if (lease === undefined || !this.usable(lease, plan, now, wall)) return undefined;
      if (plan.rpm >= 0 && lease.requestsUsed >= lease.requests) return undefined;
      if (plan.tpm >= 0 && lease.tokensUsed >= lease.tokens) return undefined;
      if (plan.maxMicros >= 0 && lease.held - lease.reserved - lease.spent < estimate) return undefined;
    }
    return this.commit(plans, estimate, now, tokens);
  }

  /**
   * Admits the call from the subjects' leases without checking them (right after Redis granted leases for it).
   * The admission settles locally: the estimate (and its top-ups) go back to the lease, the cost and tokens are
   * counted on it. Its top-ups (`Admission.extend`) are answered by the book's `extend`.
   */
  commit(plans: SubjectPlan[], estimate: number, now: number, tokens = 0): Admission {
    const wall = performance.now();
    for (const plan of plans) {
      const lease = this.lease(plan);
      lease.requestsUsed++;
      lease.kept = false;
      lease.lastEstimate = estimate;
      lease.lastTokens = tokens;
      lease.reserved += estimate;
      lease.lastUsed = now;
      lease.lastUsedWall = wall;
      if (wall - lease.demandSince > DEMAND_SPAN_MS) {
        lease.previousRate = lease.demand / (wall - lease.demandSince);
        lease.demand = 0;
        lease.demandSince = wall;
      }
      lease.demand++;
    }
    const call: InFlight = { plans, estimate, at: now };
    this.inFlight.add(call);
    return onceAdmission(
      (usage) => {
        const { cost, tokens } = settledAmounts(usage);
        const reserved = this.inFlight.delete(call) ? call.estimate : 0;
        for (const plan of plans) {
          const lease = this.lease(plan);
          lease.reserved -= reserved;
          lease.spent += cost;
          lease.tokensUsed += tokens;
        }
      },
      (extra) => this.extend(call, extra),
    );
  }

  /**
   * A top-up of `extra` micro-USD for a call in flight from its subjects' leases, when every budget's lease is
   * valid and has it left (no I/O): added to the call's reservation and true; else false and nothing changed.
   * False also once the call's reservation was reclaimed.
   */
  extendLocal(call: InFlight, extra: number, now: number): boolean {
    if (!this.inFlight.has(call)) return false;
    const wall = performance.now();
    for (const plan of call.plans) {
      if (plan.maxMicros < 0) continue;
      const lease = this.leases.get(plan.counterId);
      if (lease === undefined || !this.usable(lease, plan, now, wall)) return false;
      if (lease.held - lease.reserved - lease.spent < extra) return false;
    }
    return this.extendGranted(call, extra);
  }

  /**
   * Adds `extra` micro-USD to a call's reservation on its leases without checking them (right after Redis granted
   * leases for it); false when the call's reservation was reclaimed meanwhile.
   */
  extendGranted(call: InFlight, extra: number): boolean {
    if (!this.inFlight.has(call)) return false;
    call.estimate += extra;
    for (const plan of call.plans) this.lease(plan).reserved += extra;
    return true;
  }

  /**
   * Reclaims the reservations of calls admitted `reservationTtlMs` or more before `now` and never settled (a
   * settle that comes later only counts its cost).
   */
  reclaim(now: number): void {
    for (const call of this.inFlight) {
      if (call.at + this.reservationTtlMs > now) break;
      this.inFlight.delete(call);
      for (const plan of call.plans) this.lease(plan).reserved -= call.estimate;
    }
  }

  /**
   * The snapshot to send for `lease`: return its unused part and settle what it spent; when `admitting`, ask for
   * a new lease sized from demand for a call of `estimate` micro-USD and `tokens` tokens; else, when `keep` and
   * {@link keepFor} allows it, ask for one call's slice to keep (the last call's request, tokens and estimate).
   */
  snapshot(
    lease: Lease,
    plan: SubjectPlan,
    now: number,
    newId: string,
    admitting: Want | undefined,
    keep = false,
  ): LeaseSnapshot {
    const index = windowIndex(now);
    const sameWindow = lease.window === index;
    const returned = sameWindow ? lease.requests - lease.requestsUsed : 0;
    const tokenDelta = lease.tokensUsed - (sameWindow ? lease.tokens : 0);
    let wantRequests = 0;
    let ttl = LEASE_TTL_MS;
    let kept: Want | undefined;
    if (admitting !== undefined) {
      const elapsed = Math.max(DEMAND_SPAN_MS, performance.now() - lease.demandSince);
      const rate = Math.max(lease.demand / elapsed, lease.previousRate);
      wantRequests = 1 + lease.waiting + Math.ceil(rate * LEASE_TTL_MS);
    } else if (keep) {
      const keepMs = this.keepFor(lease, now, performance.now());
      if (keepMs > 0) {
        wantRequests = 1;
        kept = { estimate: lease.lastEstimate, tokens: lease.lastTokens };
        // A call still in flight keeps the member on the short lifetime until it settles.
        if (lease.reserved <= 0) ttl = keepMs;
      }
    }
    const want = admitting ?? kept;
    return {
      lease,
      plan,
      index,
      returned,
      tokensUsed: lease.tokensUsed,
      tokenDelta,
      oldMember: lease.member,
      oldAmount: lease.held,
      oldPeriod: lease.member === "" ? plan.period : lease.memberPeriod,
      spent: lease.spent,
      carry: Math.max(0, lease.reserved),
      newId,
      wantRequests,
      wantTokens: wantRequests * Math.max(1, want?.tokens ?? 0),
      wantBudget: wantRequests * (want?.estimate ?? 0),
      estimate: want?.estimate ?? 0,
      keep: kept !== undefined,
      ttl,
    };
  }

  /**
   * How long (ms) a slice kept for `lease` now could live for its holder: until {@link KEEP_IDLE_MS} after the
   * subject's last call here (clock and wall time); 0 when it must not be kept (dropped, no call yet, or less than
   * a lease lifetime left).
   */
  keepFor(lease: Lease, now: number, wall: number): number {
    if (lease.dropped || lease.lastEstimate < 0) return 0;
    const left = Math.min(lease.lastUsed + KEEP_IDLE_MS - now, lease.lastUsedWall + KEEP_IDLE_MS - wall);
    return left >= LEASE_TTL_MS ? Math.floor(left) : 0;
  }

  /** Applies a granted (or returned, all grants 0) lease call to the lease. */
  granted(s: LeaseSnapshot, grant: { requests: number; tokens: number; budget: number }, now: number): void {
    const { lease } = s;
    lease.plan = s.plan;
    lease.window = s.index;
    lease.requests = grant.requests;
    lease.requestsUsed = 0;
    lease.tokens = grant.tokens;
    lease.tokensUsed -= s.tokensUsed;
    lease.spent -= s.spent;
    lease.held = s.carry + grant.budget;
    lease.member = lease.held > 0 && s.plan.maxMicros >= 0 ? `${s.newId}:${lease.held}` : "";
    if (lease.member === "") lease.held = 0;
    lease.memberPeriod = s.plan.period;
    lease.ttl = s.ttl;
    lease.expiresAt = now + s.ttl;
    lease.takenAtWall = performance.now();
    lease.kept = s.keep && grant.requests + grant.tokens + grant.budget > 0;
    lease.dropped = false;
  }

  /** Applies the undo of a lease call that got no reply: returned, nothing granted, the carry still held. */
  undone(s: LeaseSnapshot, now: number): void {
    this.granted(s, { requests: 0, tokens: 0, budget: 0 }, now);
    s.lease.dropped = true;
  }

  /** Drops the subject's lease (revoked, limits changed): no call admits from it; the sweep returns it. */
  drop(counterId: string): boolean {
    const lease = this.leases.get(counterId);
    if (lease === undefined) return false;
    lease.dropped = true;
    return true;
  }

  /**
   * Whether the lease should be returned (and a slice kept, when the sweep asks for it) now: it holds something
   * unused or unsettled and is idle (a kept slice no call used: idle {@link KEEP_IDLE_MS}), dropped, stale (its
   * rpm/tpm window or budget period over) or near expiry; or it holds a member near expiry.
   */
  due(lease: Lease, now: number, wall: number, all: boolean): boolean {
    if (lease.busy !== undefined) return false;
    const unsettled =
      lease.requests > lease.requestsUsed ||
      lease.tokens > 0 ||
      lease.tokensUsed > 0 ||
      lease.spent > 0 ||
      lease.held > Math.max(0, lease.reserved);
    const nearExpiry =
      lease.held > 0 &&
      (now >= lease.expiresAt - LEASE_RENEW_BEFORE_MS ||
        wall >= lease.takenAtWall + lease.ttl - LEASE_RENEW_BEFORE_MS);
    if (nearExpiry || (all && (unsettled || lease.held > 0))) return true;
    if (!unsettled) return false;
    const idleMs = lease.kept ? KEEP_IDLE_MS : this.idleMs;
    const idle = now - lease.lastUsed >= idleMs || wall - lease.lastUsedWall >= idleMs;
    const { plan } = lease;
    const stale =
      (lease.window !== windowIndex(now) && (!lease.kept || plan.rpm >= 0 || plan.tpm >= 0)) ||
      lease.memberPeriod !== plan.period;
    return idle || stale || lease.dropped;
  }

  /**
   * The leases due now (see {@link due}), in one pass over the book that also forgets the empty ones (see
   * {@link prune}): the sweep's scan, every 250 ms, so one visit per lease.
   */
  collectDue(now: number, wall: number, all: boolean): Lease[] {
    const due: Lease[] = [];
    for (const [id, lease] of this.leases) {
      if (this.due(lease, now, wall, all)) due.push(lease);
      else if (empty(lease)) this.leases.delete(id);
    }
    return due;
  }

  /**
   * Forgets `leases` (by default all) that hold nothing, owe Redis nothing and have no call in flight or
   * waiting.
   */
  prune(leases: Iterable<Lease> = this.leases.values()): void {
    for (const lease of leases) {
      if (empty(lease) && this.leases.get(lease.counterId) === lease) this.leases.delete(lease.counterId);
    }
  }
}

/** Whether the lease holds nothing, owes Redis nothing and has no call in flight or waiting. */
function empty(lease: Lease): boolean {
  return (
    lease.busy === undefined &&
    lease.waiting === 0 &&
    lease.reserved <= 0 &&
    lease.held === 0 &&
    lease.requests <= lease.requestsUsed &&
    lease.tokens === 0 &&
    lease.tokensUsed === 0 &&
    lease.spent === 0
  );
}
