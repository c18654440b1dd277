/**
 * The shared {@link Admitter}, by leases (docs/leases.md): each instance takes a slice of a subject's rpm, tpm
 * and budget from Redis in ONE script call for all subjects of a call (all-or-nothing), admits calls from it
 * locally without any round trip while it covers them ({@link LeaseBook}), and returns the unused part and
 * settles what it spent in batch: when the slice runs out and a new one is taken (the same call), when idle
 * (1 s), before expiry (5 s), when the key or user changes (`drop`, fed by the invalidation bus) and at
 * shutdown. Redis keeps `settled + open leases <= limit`, so all instances together never admit past a limit.
 *
 * Degrading to per-instance limits needs evidence that Redis is gone, because the fallback cannot see the
 * leases other instances hold in Redis:
 * - the command link is down (ioredis reports it closed or reconnecting; the connection is then degraded), or
 *   Redis answered a lease call with an error;
 * - or a lease call got no reply within the command timeout, its retry on the {@link PatientLink} (no command
 *   timeout; `probeTimeoutMs` of wall time, judged only after the event loop had a turn to read the reply) got
 *   none either, AND the patient link has had no reply to anything for `outageAfterMs`.
 * A timeout alone is not evidence (a busy event loop fires timers before it reads replies that have arrived): the
 * call waits for its patient retry instead of being admitted blindly; when that gets no reply either but the
 * outage is not yet established, the call is refused with a retryable 503 `limits_unavailable`. A lease call
 * that got no reply may still run in Redis: an undo script is sent behind it on the same link, which leaves the
 * previous lease returned and nothing granted whether or not the call ran.
 *
 * Leases already held keep admitting while Redis is gone (Redis granted them). Past them the in-process fallback
 * admits, its counters raised to what Redis last reported ({@link SharedFloors}: every open lease counted as
 * spent): never looser than the shared state it replaces, though each instance then counts on its own.
 *
 * Key layout under the prefix (e.g. `gw:`): `<prefix><scope>:<id>:rpm:<window>`, `…:tpm:<window>`,
 * `…:budget:<period end ms | lifetime>` (hash), `…:budget:<period>:leases` (sorted set of budget leases) and
 * `<prefix>lease:<lease id>` (a short-lived marker per lease call, read by the undo).
 */
import type { RedisConnection } from "../cache/redis.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Clock } from "../time/clock.js";
import { type InFlight, type LEASE_IDLE_MS, type LeaseRefusal, sharesRefusal, type Want } from "./lease.js";
import { defineScripts, LeaseCalls, refusals } from "./lease-calls.js";
import { LeaseBook } from "./leases.js";
import type { InProcessAdmitter } from "./memory-admitter.js";
import { hasParallel, parallelPlans, RedisSlots } from "./parallel.js";
import { PatientLink } from "./patient-link.js";
import {
  BudgetRefusal,
  counted,
  EXTENDED,
  NOT_EXTENDED,
  planSubjects,
  RESERVATION_TTL_MS,
  type SubjectPlan,
  toMicros,
  unlimitedAdmission,
} from "./rules.js";
import { SharedFloors } from "./shared-floors.js";
import type { Admission, AdmissionRequest, Admitter, Extension } from "./types.js";

/** Options of {@link RedisAdmitter}. */
export interface RedisAdmitterOptions {
  connection: RedisConnection;
  clock: Clock;
  /** Used while Redis is degraded. */
  fallback: InProcessAdmitter;
  /** A call's reservation never settled is reclaimed after this many ms. Default {@link RESERVATION_TTL_MS}. */
  reservationTtlMs?: number;
  /** A lease unused this long (ms) is returned. Default {@link LEASE_IDLE_MS}. */
  leaseIdleMs?: number;
  /** How often due leases are looked for and returned, ms of wall time. Default 250. */
  sweepIntervalMs?: number;
  /** Wall time the patient retry of a late admit may take, ms. Default 1000. */
  probeTimeoutMs?: number;
  /** How long the patient link must go without any reply before Redis counts as gone, ms. Default 3000. */
  outageAfterMs?: number;
}

/**
 * 503 while Redis answers neither in time nor late, but is not yet shown to be gone: the call is neither admitted
 * blindly nor refused as over a limit. Retryable (`retry-after: 1`).
 */
export function limitsUnavailable(): GatewayError {
  return new GatewayError(
    503,
    "Rate limits and budgets cannot be checked right now: the shared limit store (Redis) is not answering. Retry shortly.",
    { type: "api_error", code: "limits_unavailable", headers: { "retry-after": "1" } },
  );
}

/** Rate limits and budgets shared through Redis by leases, with an in-process fallback; see the module comment. */
export class RedisAdmitter implements Admitter {
  private readonly connection: RedisConnection;
  /** The lease calls to Redis. */
  private readonly calls: LeaseCalls;
  private readonly clock: Clock;
  private readonly fallback: InProcessAdmitter;
  private readonly sweeper: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;
  /** The leases this instance holds. */
  readonly book: LeaseBook;
  /** The shared counters as last reported, for the fallback. */
  readonly floors = new SharedFloors();
  /** Calls in flight of subjects with `max_parallel_requests`, shared through Redis. */
  private readonly slots: RedisSlots;

  constructor(options: RedisAdmitterOptions) {
    this.connection = options.connection;
    this.clock = options.clock;
    this.fallback = options.fallback;
    this.book = new LeaseBook(options.reservationTtlMs, options.leaseIdleMs, (call, extra) =>
      this.extendShared(call, extra),
    );
    const patient = new PatientLink(options.connection, options.probeTimeoutMs ?? 1000, defineScripts);
    this.calls = new LeaseCalls({
      connection: options.connection,
      clock: options.clock,
      book: this.book,
      floors: this.floors,
      patient,
      outageAfterMs: options.outageAfterMs ?? 3 * patient.timeoutMs,
    });
    this.slots = new RedisSlots(options.connection.client, options.connection.keyPrefix, this.calls.instance);
    this.sweeper = setInterval(() => void this.sweep(false), options.sweepIntervalMs ?? 250);
    this.sweeper.unref();
  }

  /**
   * From the local leases when they cover the call (no I/O: the promise is already resolved), else through one
   * lease call to Redis.
   * @throws GatewayError 429 `rate_limit_error` or `budget_exceeded` (see `rules.ts`); 503 `limits_unavailable`
   *   while Redis does not answer but is not yet shown to be gone (see the module comment).
   */
  admit(request: AdmissionRequest): Promise<Admission> {
    const plans = planSubjects(request.subjects);
    if (plans.length === 0) return Promise.resolve(unlimitedAdmission);
    const estimate = toMicros(request.estimatedCost);
    const tokens = Math.max(0, Math.round(request.estimatedTokens));
    if (plans.some(hasParallel)) return this.admitParallel(plans, parallelPlans(plans), estimate, tokens);
    const local = this.book.tryAdmit(plans, estimate, this.clock.now(), tokens);
    if (local !== undefined) return Promise.resolve(local);
    return this.admitShared(plans, estimate, tokens);
  }

  /**
   * A call of subjects with `max_parallel_requests`: their slots in Redis first (one script call,
   * `parallel.ts`), then the other limits from the leases; the admission gives the slots back when it finishes.
   * While Redis is gone, the fallback counts both per instance; a slot call that fails otherwise is a 503
   * `limits_unavailable` (a slot is never taken blindly).
   */
  private async admitParallel(
    plans: SubjectPlan[],
    parallel: SubjectPlan[],
    estimate: number,
    tokens: number,
  ): Promise<Admission> {
    if (!this.connection.isConnected()) return this.fallback.admitPlans(plans, estimate, this.floors);
    let give: () => void;
    try {
      give = await this.slots.take(parallel, this.clock.now());
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      if (!this.connection.isConnected()) return this.fallback.admitPlans(plans, estimate, this.floors);
      this.connection.metrics.fails.inc({ operation: "admit" });
      throw limitsUnavailable();
    }
    const rest = plans.filter(counted);
    let inner: Admission;
    try {
      inner =
        rest.length === 0
          ? unlimitedAdmission
          : (this.book.tryAdmit(rest, estimate, this.clock.now(), tokens) ??
            (await this.admitShared(rest, estimate, tokens)));
    } catch (error) {
      give();
      throw error;
    }
    return {
      settle: (usage) => {
        give();
        inner.settle(usage);
      },
      release: () => {
        give();
        inner.release();
      },
      extend: (cost) => inner.extend(cost),
    };
  }

  /**
   * Stops returning leases to Redis: `true` (shutdown) returns every lease now (what it spent is settled, the
   * unused part is free again at once), `false` leaves them to expire (as a crashed instance would).
   */
  async stop(returnLeases: boolean): Promise<void> {
    clearInterval(this.sweeper);
    await this.sweeping;
    if (returnLeases) await this.sweep(true);
  }

  /** Returns every lease that has anything to return or settle, now (tests, shutdown). */
  flush(): Promise<void> {
    return this.sweep(true);
  }

  /**
   * Drops this instance's lease on a subject (`key:<hash>` or `user:<id>`): no call admits from it any more and
   * it is returned at once; the next call takes a new lease under the subject's current limits.
   */
  drop(counterId: string): void {
    if (this.book.drop(counterId)) setImmediate(() => void this.sweep(false));
  }

  /** Waits for leases being renewed, then renews the subjects' leases for this call and admits it. */
  private admitShared(plans: SubjectPlan[], estimate: number, tokens: number): Promise<Admission> {
    const local = () => this.book.tryAdmit(plans, estimate, this.clock.now(), tokens);
    return this.throughLease(
      plans,
      { estimate, tokens },
      {
        local,
        shares: (refusal) => sharesRefusal(refusal, plans, estimate),
        granted: () => this.book.commit(plans, estimate, this.clock.now(), tokens),
        late: () => {
          throw limitsUnavailable();
        },
        degraded: () => this.fallback.admitPlans(plans, estimate, this.floors),
      },
    );
  }

  /**
   * A top-up of `extra` micro-USD for a call admitted from leases (`Admission.extend`): from the leases when
   * they have it (no I/O), else through one lease call that checks the budgets only (`LEASE_LUA` admit mode 2).
   * Refused (`granted: false`) when a budget cannot hold it, and when Redis does not answer or is gone: the
   * per-instance fallback cannot see this call's reservation, and a top-up is never granted blindly.
   */
  private readonly extendShared = async (call: InFlight, extra: number): Promise<Extension> => {
    if (this.book.extendLocal(call, extra, this.clock.now())) return EXTENDED;
    const { plans } = call;
    const local = () => (this.book.extendLocal(call, extra, this.clock.now()) ? EXTENDED : undefined);
    try {
      return await this.throughLease(
        plans,
        { estimate: extra, tokens: 0, topUp: true },
        {
          local,
          shares: (refusal) => refusal.kind === "budget" && sharesRefusal(refusal, plans, extra),
          granted: () => (this.book.extendGranted(call, extra) ? EXTENDED : NOT_EXTENDED),
          late: () => NOT_EXTENDED,
          degraded: () => NOT_EXTENDED,
        },
      );
    } catch (error) {
      if (error instanceof BudgetRefusal) return { granted: false, available: error.available };
      return NOT_EXTENDED;
    }
  };

  /**
   * Waits for the subjects' leases being renewed (then `local()` may already answer), and otherwise renews
   * them for `want` in one hardened lease call: command link, then the patient link, then the verdict
   * (`granted`, `late` when neither link answered in time, `degraded` when Redis is shown to be gone). A lease
   * call's refusal is thrown, and shared with the calls waiting on it when `shares` says so.
   */
  private async throughLease<T>(
    plans: SubjectPlan[],
    want: Want,
    on: {
      local: () => T | undefined;
      shares: (refusal: LeaseRefusal) => boolean;
      granted: () => T;
      late: () => T;
      degraded: () => T;
    },
  ): Promise<T> {
    for (;;) {
      const busy = plans
        .map((plan) => this.book.leases.get(plan.counterId)?.busy)
        .find((b) => b !== undefined);
      if (busy === undefined) break;
      const waiting = plans.map((plan) => this.book.lease(plan));
      for (const lease of waiting) lease.waiting++;
      const refusal = await busy;
      for (const lease of waiting) lease.waiting--;
      const local = on.local();
      if (local !== undefined) return local;
      if (refusal !== undefined && on.shares(refusal)) throw refusal.refuse(want.estimate);
    }
    if (!this.connection.isConnected()) return on.degraded();
    this.book.reclaim(this.clock.now());
    const leases = plans.map((plan) => this.book.lease(plan));
    let unlock: (refusal: LeaseRefusal | undefined) => void = () => {};
    const lock = new Promise<LeaseRefusal | undefined>((resolve) => {
      unlock = resolve;
    });
    for (const lease of leases) lease.busy = lock;
    let refusal: LeaseRefusal | undefined;
    try {
      return await this.renew(plans, want, on);
    } catch (error) {
      refusal = refusals.get(error as object);
      throw error;
    } finally {
      for (const lease of leases) lease.busy = undefined;
      unlock(refusal);
    }
  }

  /** The hardened lease call: command link, then the patient link, then the verdict (see {@link throughLease}). */
  private async renew<T>(
    plans: SubjectPlan[],
    want: Want,
    on: { granted: () => T; late: () => T; degraded: () => T },
  ): Promise<T> {
    const first = await this.calls.call(plans, want, false);
    if (first === true) return on.granted();
    if (first.kind === "late") {
      const retry = await this.calls.call(plans, want, true);
      if (retry === true) {
        this.connection.metrics.fails.inc({ operation: "admit" });
        return on.granted();
      }
      if (retry.kind === "late") {
        this.connection.metrics.fails.inc({ operation: "admit" });
        return on.late();
      }
      this.connection.reportFailure("admit", retry.error);
    } else {
      this.connection.reportFailure("admit", first.error);
    }
    return on.degraded();
  }

  /**
   * Returns the leases that are due (all with something to return when `all`), in batches of one script call
   * each. Runs one at a time; failures are counted (a late reply) or degrade the connection (a link down).
   */
  private sweep(all: boolean): Promise<void> {
    if (this.sweeping !== undefined) return all ? this.sweeping.then(() => this.sweep(true)) : this.sweeping;
    const run = async () => {
      const now = this.clock.now();
      if (this.connection.isConnected()) this.slots.renew(now);
      this.book.reclaim(now);
      const wall = performance.now();
      const due = this.book.collectDue(now, wall, all);
      for (let i = 0; i < due.length && this.connection.isConnected(); i += SWEEP_BATCH) {
        const batch = due.slice(i, i + SWEEP_BATCH).filter((lease) => lease.busy === undefined);
        if (batch.length === 0) continue;
        let unlock: (refusal: undefined) => void = () => {};
        const lock = new Promise<undefined>((resolve) => {
          unlock = resolve;
        });
        for (const lease of batch) lease.busy = lock;
        try {
          const result = await this.calls.call(
            batch.map((lease) => lease.plan),
            undefined,
            false,
            !all,
          );
          if (result !== true) this.connection.reportFailureIfLinkDown("settle", result.error);
        } catch {
          // A return is never refused.
        } finally {
          for (const lease of batch) lease.busy = undefined;
          unlock(undefined);
        }
      }
      this.book.prune(due);
    };
    this.sweeping = run().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }
}

/** Leases returned per script call by the sweep. */
const SWEEP_BATCH = 50;
