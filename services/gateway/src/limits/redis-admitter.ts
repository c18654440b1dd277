/**
 * The shared {@link Admitter}: rpm, tpm and budgets of every subject checked and counted in ONE Redis round trip
 * (the admit script, all-or-nothing), so every gateway instance sees the same counters; settle and release are
 * one fire-and-forget script call each (not awaited by the response).
 *
 * Degrading to per-instance limits needs evidence that Redis is gone, because the fallback cannot see the
 * reservations other instances hold in Redis:
 * - the command link is down (ioredis reports it closed or reconnecting; the connection is then degraded), or
 *   Redis answered the admit with an error;
 * - or an admit got no reply within the command timeout, its retry on the {@link PatientLink} (no command
 *   timeout; `probeTimeoutMs` of wall time, judged only after the event loop had a turn to read the reply) got
 *   none either, AND the patient link has had no reply to anything for `outageAfterMs`.
 * A timeout alone is not evidence (a busy event loop fires timers before it reads replies that have arrived): the
 * call waits for its patient retry instead of being admitted blindly; when that gets no reply either but the
 * outage is not yet established, the call is refused with a retryable 503 `limits_unavailable`. A try that got
 * no reply may still run in Redis: its reservation is released behind it on the same link (its rpm count stays:
 * strict, never loose).
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
import { PatientLink } from "./patient-link.js";
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
  /** Wall time the patient retry of a late admit may take, ms. Default 1000. */
  probeTimeoutMs?: number;
  /** How long the patient link must go without any reply before Redis counts as gone, ms. Default 3000. */
  outageAfterMs?: number;
}

/** How one try through Redis ended when it did not answer the call. */
type Failure = { kind: "late"; error: unknown } | { kind: "gone"; error: unknown };

/** The message of ioredis' `commandTimeout` rejection. */
const TIMEOUT_MESSAGE = "Command timed out";

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
  private readonly patient: PatientLink;
  private readonly outageAfterMs: number;
  /** The shared counters as last reported, for the fallback. */
  readonly floors = new SharedFloors();

  constructor(options: RedisAdmitterOptions) {
    this.connection = options.connection;
    this.clock = options.clock;
    this.fallback = options.fallback;
    this.reservationTtlMs = options.reservationTtlMs ?? RESERVATION_TTL_MS;
    this.patient = new PatientLink(options.connection, options.probeTimeoutMs ?? 1000, defineScripts);
    this.outageAfterMs = options.outageAfterMs ?? 3 * this.patient.timeoutMs;
    this.client = defineScripts(options.connection.client);
  }

  /**
   * @throws GatewayError 429 `rate_limit_error` or `budget_exceeded` (see `rules.ts`); 503 `limits_unavailable`
   *   while Redis does not answer but is not yet shown to be gone (see the module comment).
   */
  async admit(request: AdmissionRequest): Promise<Admission> {
    const plans = planSubjects(request.subjects);
    if (plans.length === 0) return unlimitedAdmission;
    const estimate = toMicros(request.estimatedCost);
    if (!this.connection.isConnected()) return this.fallback.admitPlans(plans, estimate, this.floors);
    const first = await this.tryShared(plans, estimate, false);
    if (!("kind" in first)) return first;
    if (first.kind === "late") {
      const retry = await this.tryShared(plans, estimate, true);
      if (!("kind" in retry)) {
        this.connection.metrics.fails.inc({ operation: "admit" });
        return retry;
      }
      if (retry.kind === "late") {
        this.connection.metrics.fails.inc({ operation: "admit" });
        throw limitsUnavailable();
      }
      this.connection.reportFailure("admit", retry.error);
    } else {
      this.connection.reportFailure("admit", first.error);
    }
    return this.fallback.admitPlans(plans, estimate, this.floors);
  }

  /**
   * One admit script call, on the command link or (`patient`) the patient link: the admission, or how it failed.
   * Throws the script's refusal.
   */
  private async tryShared(
    plans: SubjectPlan[],
    estimate: number,
    patient: boolean,
  ): Promise<Admission | Failure> {
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

    const started = performance.now();
    const client = patient ? (this.patient.client as Redis & LimitCommands) : this.client;
    const sent = patient
      ? await this.patient.run(() => client.gatewayLimitsAdmit(keys.length, ...keys, ...args))
      : await client.gatewayLimitsAdmit(keys.length, ...keys, ...args).then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
    if (!sent.ok) {
      const { error } = sent;
      // The script may have run: drop its reservation (sent behind it on the same link, so it runs after it).
      if (client.status === "ready" || patient)
        this.finish(plans, member, estimate, undefined, index, client);
      const late = patient
        ? this.patient.silentForMs() < this.outageAfterMs && !isReplyError(error)
        : client.status === "ready" && (error as Error)?.message === TIMEOUT_MESSAGE;
      return late ? { kind: "late", error } : { kind: "gone", error };
    }
    const reply: ScriptReply = sent.value;
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
    client: Redis & LimitCommands = this.client,
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
    client
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

/** Defines the limit scripts on a link (each link needs its own definitions). */
function defineScripts(client: Redis): Redis & LimitCommands {
  client.defineCommand("gatewayLimitsAdmit", { lua: ADMIT_LUA });
  client.defineCommand("gatewayLimitsSettle", { lua: SETTLE_LUA });
  return client as Redis & LimitCommands;
}

/** Redis answered with an error (e.g. OOM, a script error): it is there but cannot serve the shared counters. */
function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === "ReplyError";
}
