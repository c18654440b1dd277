/**
 * The shared {@link Admitter}: rpm, tpm and budgets of every subject checked and counted in ONE Redis round trip
 * (the admit script, all-or-nothing), so every gateway instance sees the same counters; settle and release are
 * one fire-and-forget script call each (not awaited by the response).
 *
 * Degrading to per-instance limits needs evidence that Redis is gone, because the fallback cannot see the
 * reservations other instances hold in Redis:
 * - the command link is down (ioredis reports it closed or reconnecting; the connection is then degraded), or
 *   Redis answered the admit with an error;
 * - or an admit got no reply within the command timeout AND a health probe ({@link RedisProbe}: a PING on its
 *   own link, judged after the event loop had a turn to read it) got none within the probe timeout.
 * A timeout alone is not evidence (a busy event loop fires timers before it reads replies that have arrived):
 * the call waits for the probe's verdict and, when Redis is alive, is admitted through Redis again (at most
 * `maxAttempts` tries, then 503 `limits_unavailable`). A timed-out admit may have run in Redis: its reservation
 * is released before the retry (its rpm count stays, which errs on the strict side).
 *
 * While the connection is degraded the hot path does not touch Redis and the in-process fallback admits, its
 * counters raised to what Redis last reported ({@link SharedFloors}): never looser than the shared state it
 * replaces, though each instance then counts on its own. A call admitted through Redis settles through Redis; if
 * Redis is gone by then, the settle is dropped: its reservation expires after the reservation TTL and the
 * budget's spend floor is restored from the database's figure (`subject.spend`) on the next admit.
 *
 * Key layout under the prefix (e.g. `gw:`): `<prefix><scope>:<id>:rpm:<window>`, `…:tpm:<window>`,
 * `…:budget:<period end ms | lifetime>` (hash) and `…:budget:<period>:res` (sorted set of reservations).
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { RedisConnection } from "../cache/redis.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Clock } from "../time/clock.js";
import type { InProcessAdmitter } from "./memory-admitter.js";
import { RedisProbe } from "./redis-probe.js";
import {
  budgetCounterTtlMs,
  budgetError,
  onceAdmission,
  planSubjects,
  RESERVATION_TTL_MS,
  rateLimitError,
  type SubjectPlan,
  settledAmounts,
  toMicros,
  unlimitedAdmission,
  WINDOW_MS,
  windowIndex,
} from "./rules.js";
import { ADMIT_LUA, SETTLE_LUA } from "./scripts.js";
import { SharedFloors } from "./shared-floors.js";
import type { Admission, AdmissionRequest, Admitter, SettledUsage } from "./types.js";

type ScriptReply = number[];

interface LimitCommands {
  gatewayLimitsAdmit(numKeys: number, ...args: Array<string | number>): Promise<ScriptReply>;
  gatewayLimitsSettle(numKeys: number, ...args: Array<string | number>): Promise<number>;
}

/** Options of {@link RedisAdmitter}. */
export interface RedisAdmitterOptions {
  connection: RedisConnection;
  clock: Clock;
  /** Used while Redis is degraded. */
  fallback: InProcessAdmitter;
  /** Reservation lifetime, ms. Default {@link RESERVATION_TTL_MS}. */
  reservationTtlMs?: number;
  /** How long the health probe's PING may take before Redis counts as gone, ms. Default 1000. */
  probeTimeoutMs?: number;
  /** Tries through Redis per admit while its replies come late but the probe finds it alive. Default 3. */
  maxAttempts?: number;
}

/** How one try through Redis ended when it did not answer the call. */
type Failure = { kind: "late"; error: unknown } | { kind: "gone"; error: unknown };

/** The message of ioredis' `commandTimeout` rejection. */
const TIMEOUT_MESSAGE = "Command timed out";

/**
 * 503 when Redis stays late though alive: the call is neither admitted blindly nor refused as over a limit.
 * Retryable (`retry-after: 1`).
 */
export function limitsUnavailable(): GatewayError {
  return new GatewayError(
    503,
    "Rate limits and budgets could not be checked in time (the shared limit store answered too late); retry shortly.",
    { type: "api_error", code: "limits_unavailable", headers: { "retry-after": "1" } },
  );
}

/** A window counter lives two windows (ms), so a settle at the window's edge still finds it. */
const WINDOW_TTL_MS = 2 * WINDOW_MS;

/** Rate limits and budgets shared through Redis, with an in-process fallback; see the module comment. */
export class RedisAdmitter implements Admitter {
  private readonly connection: RedisConnection;
  private readonly client: Redis & LimitCommands;
  private readonly clock: Clock;
  private readonly fallback: InProcessAdmitter;
  private readonly reservationTtlMs: number;
  /** Reservation members are `<instance>.<counter>:<micro-USD>`, unique across instances. */
  private readonly instance = randomBytes(6).toString("hex");
  private nextAdmission = 0;
  private readonly probe: RedisProbe;
  private readonly probeTimeoutMs: number;
  private readonly maxAttempts: number;
  /** The shared counters as last reported, for the fallback. */
  readonly floors = new SharedFloors();

  constructor(options: RedisAdmitterOptions) {
    this.connection = options.connection;
    this.clock = options.clock;
    this.fallback = options.fallback;
    this.reservationTtlMs = options.reservationTtlMs ?? RESERVATION_TTL_MS;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 1000;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.probe = new RedisProbe(options.connection, this.probeTimeoutMs);
    const client = options.connection.client;
    client.defineCommand("gatewayLimitsAdmit", { lua: ADMIT_LUA });
    client.defineCommand("gatewayLimitsSettle", { lua: SETTLE_LUA });
    this.client = client as Redis & LimitCommands;
  }

  /**
   * @throws GatewayError 429 `rate_limit_error` or `budget_exceeded` (see `rules.ts`); 503 `limits_unavailable`
   *   when Redis is alive but its replies stayed late for `maxAttempts` tries.
   */
  async admit(request: AdmissionRequest): Promise<Admission> {
    const plans = planSubjects(request.subjects);
    if (plans.length === 0) return unlimitedAdmission;
    const estimate = toMicros(request.estimatedCost);
    for (let attempt = 1; ; attempt++) {
      if (!this.connection.isConnected()) return this.fallback.admitPlans(plans, estimate, this.floors);
      const outcome = await this.tryShared(plans, estimate);
      if (!("kind" in outcome)) return outcome;
      if (outcome.kind === "late") {
        if ((await this.probe.check()) === "alive") {
          this.connection.metrics.fails.inc({ operation: "admit" });
          if (attempt < this.maxAttempts) continue;
          throw limitsUnavailable();
        }
        const reason = new Error(`no reply, and none to a health probe within ${this.probeTimeoutMs} ms`);
        this.connection.reportFailure("admit", reason);
      } else {
        this.connection.reportFailure("admit", outcome.error);
      }
      return this.fallback.admitPlans(plans, estimate, this.floors);
    }
  }

  /** One admit script call: the admission, or how it failed. Throws the script's refusal. */
  private async tryShared(plans: SubjectPlan[], estimate: number): Promise<Admission | Failure> {
    const now = this.clock.now();
    const index = windowIndex(now);
    const member = estimate > 0 ? `${this.instance}.${this.nextAdmission++}:${estimate}` : "";
    const keys: string[] = [];
    const args: Array<string | number> = [now, member, now + this.reservationTtlMs, WINDOW_TTL_MS, estimate];
    for (const plan of plans) {
      const base = this.base(plan);
      const budget = `${base}:budget:${plan.period}`;
      keys.push(`${base}:rpm:${index}`, `${base}:tpm:${index}`, budget, `${budget}:res`);
      args.push(plan.rpm, plan.tpm, plan.maxMicros, plan.seedMicros, budgetCounterTtlMs(plan.subject, now));
    }

    let reply: ScriptReply;
    const started = performance.now();
    try {
      reply = await this.client.gatewayLimitsAdmit(keys.length, ...keys, ...args);
    } catch (error) {
      const linkUp = this.client.status === "ready";
      const late = linkUp && error instanceof Error && error.message === TIMEOUT_MESSAGE;
      // The script may have run: drop its reservation (sent after it on the same link, so it runs after it).
      if (linkUp) this.finish(plans, member, estimate, undefined, index);
      return late ? { kind: "late", error } : { kind: "gone", error };
    }
    this.connection.observe("admit", (performance.now() - started) / 1000);

    const [subjectIndex = -1, kind = 0, used = 0, reserved = 0] = reply;
    const refused = plans[subjectIndex];
    if (refused !== undefined) {
      if (kind === 3) throw budgetError(refused, used, reserved, estimate);
      throw rateLimitError(refused, kind === 1 ? "rpm" : "tpm", used, now);
    }
    plans.forEach((plan, i) => {
      const at = 1 + i * 4;
      this.floors.learn(plan, index, {
        rpmUsed: reply[at] ?? -1,
        tpmUsed: reply[at + 1] ?? -1,
        spentMicros: reply[at + 2] ?? -1,
        reservedMicros: reply[at + 3] ?? -1,
      });
    });
    return onceAdmission((usage) => this.finish(plans, member, estimate, usage));
  }

  private base(plan: SubjectPlan): string {
    return `${this.connection.keyPrefix}${plan.counterId}`;
  }

  /**
   * Fire-and-forget settle/release (tokens count in window `index`, default the current one). A failure is
   * counted; it degrades the connection only when the link is down (a late reply is no evidence, see above).
   */
  private finish(
    plans: SubjectPlan[],
    member: string,
    estimate: number,
    usage: SettledUsage | undefined,
    index = windowIndex(this.clock.now()),
  ): void {
    const { cost, tokens } = settledAmounts(usage);
    if (member === "" && cost === 0 && tokens === 0) return;
    if (!this.connection.isConnected()) return;
    const keys: string[] = [];
    const flags: string[] = [];
    for (const plan of plans) {
      const base = this.base(plan);
      const budget = `${base}:budget:${plan.period}`;
      keys.push(`${base}:tpm:${index}`, budget, `${budget}:res`);
      flags.push((plan.tpm >= 0 ? "t" : "") + (plan.maxMicros >= 0 ? "b" : ""));
    }
    const started = performance.now();
    this.client
      .gatewayLimitsSettle(keys.length, ...keys, member, estimate, cost, tokens, WINDOW_TTL_MS, ...flags)
      .then(
        () => this.connection.observe("settle", (performance.now() - started) / 1000),
        (error: unknown) => {
          if (this.client.status === "ready") this.connection.metrics.fails.inc({ operation: "settle" });
          else this.connection.reportFailure("settle", error);
        },
      );
  }
}
