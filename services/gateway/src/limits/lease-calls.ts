/**
 * One lease call to Redis (docs/leases.md): the snapshots of the subjects' leases sent to `LEASE_LUA` on the
 * command link or the patient link, the reply applied to the book (grants, or the refusal thrown) and to the
 * fallback's floors, and the undo sent behind a call that got no reply. When a call counts as late or gone is
 * decided here; what happens then is the Redis admitter's job (`redis-admitter.ts`).
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { RedisConnection } from "../cache/redis.js";
import type { Clock } from "../time/clock.js";
import { HOLD_MARGIN_MS, LEASE_HOLD_MS, type LeaseRefusal, type LeaseSnapshot, type Want } from "./lease.js";
import type { LeaseBook } from "./leases.js";
import type { PatientLink } from "./patient-link.js";
import { budgetError, rateLimitError, type SubjectPlan, WINDOW_MS } from "./rules.js";
import { LEASE_LUA, leaseArgs, leaseKeys, UNDO_LUA, undoArgs } from "./scripts.js";
import type { SharedFloors } from "./shared-floors.js";

type ScriptReply = number[];

/** The limit scripts as commands of an ioredis link ({@link defineScripts}). */
export interface LimitCommands {
  gatewayLimitsLease(numKeys: number, ...args: Array<string | number>): Promise<ScriptReply>;
  gatewayLimitsUndo(numKeys: number, ...args: Array<string | number>): Promise<number>;
}

/** How one try through Redis ended when it did not answer the call. */
export type Failure = { kind: "late"; error: unknown } | { kind: "gone"; error: unknown };

/** The message of ioredis' `commandTimeout` rejection. */
const TIMEOUT_MESSAGE = "Command timed out";
/** A window counter lives two windows (ms), so a settle at the window's edge still finds it. */
const WINDOW_TTL_MS = 2 * WINDOW_MS;
/** How long the marker of a lease call lives, ms (far longer than any retry of it). */
const MARKER_TTL_MS = 60_000;

/** The refusals thrown by lease calls, for the calls that waited on them. */
export const refusals = new WeakMap<object, LeaseRefusal>();

/** What a {@link LeaseCalls} works with. */
export interface LeaseCallsOptions {
  connection: RedisConnection;
  clock: Clock;
  book: LeaseBook;
  floors: SharedFloors;
  patient: PatientLink;
  /** How long the patient link must go without any reply before Redis counts as gone, ms. */
  outageAfterMs: number;
}

/** Makes the lease calls of one instance; see the module comment. */
export class LeaseCalls {
  /** Lease members and markers are `<instance>.<n>`, unique across instances. */
  readonly instance = randomBytes(6).toString("hex");
  private nextLease = 0;
  private readonly connection: RedisConnection;
  private readonly client: Redis & LimitCommands;
  private readonly clock: Clock;
  private readonly book: LeaseBook;
  private readonly floors: SharedFloors;
  private readonly patient: PatientLink;
  private readonly outageAfterMs: number;

  constructor(options: LeaseCallsOptions) {
    this.connection = options.connection;
    this.client = defineScripts(options.connection.client);
    this.clock = options.clock;
    this.book = options.book;
    this.floors = options.floors;
    this.patient = options.patient;
    this.outageAfterMs = options.outageAfterMs;
  }

  /**
   * One lease call for `plans` (each lease returned, and renewed when `admitting`, or one call's slice kept per
   * subject when `keep` and the book allows it), on the command link or (`patient`) the patient link: true when
   * Redis granted it (applied to the leases), or how it failed (then undone behind it on the same link). Throws
   * the script's refusal.
   */
  async call(
    plans: SubjectPlan[],
    admitting: Want | undefined,
    patient: boolean,
    keep = false,
  ): Promise<true | Failure> {
    const now = this.clock.now();
    const id = `${this.instance}.${this.nextLease++}`;
    const snapshots = plans.map((plan) =>
      this.book.snapshot(this.book.lease(plan), plan, now, id, admitting, keep),
    );
    const keys: string[] = [];
    const mode = admitting === undefined ? (keep ? 3 : 0) : admitting.topUp ? 2 : 1;
    const args: Array<string | number> = [now, WINDOW_TTL_MS, mode, MARKER_TTL_MS];
    for (const s of snapshots) {
      keys.push(...leaseKeys(`${this.connection.keyPrefix}${s.plan.counterId}`, s));
      args.push(...leaseArgs(s, now, now + s.ttl + HOLD_MARGIN_MS));
    }
    keys.push(`${this.connection.keyPrefix}lease:${id}`);

    const started = performance.now();
    const client = patient ? (this.patient.client as Redis & LimitCommands) : this.client;
    const sent = patient
      ? await this.patient.run(() => client.gatewayLimitsLease(keys.length, ...keys, ...args))
      : await client.gatewayLimitsLease(keys.length, ...keys, ...args).then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
    if (!sent.ok) {
      const { error } = sent;
      // The script may have run: undo it behind it on the same link (it runs after it, if it runs at all).
      if (client.status === "ready" || patient) this.undo(snapshots, keys, now, client);
      const late = patient
        ? this.patient.silentForMs() < this.outageAfterMs && !isReplyError(error)
        : client.status === "ready" && (error as Error)?.message === TIMEOUT_MESSAGE;
      return late ? { kind: "late", error } : { kind: "gone", error };
    }
    const reply: ScriptReply = sent.value;
    this.connection.observe(admitting ? "admit" : "settle", (performance.now() - started) / 1000);

    const [subjectIndex = -1, kind = 0, used = 0, reserved = 0] = reply;
    const refused = plans[subjectIndex];
    if (refused !== undefined) {
      const limit = kind === 3 ? "budget" : kind === 1 ? "rpm" : "tpm";
      const refuse = (estimate: number) =>
        limit === "budget"
          ? budgetError(refused, used, reserved, estimate)
          : rateLimitError(refused, limit, used, this.clock.now());
      const error = refuse(admitting?.estimate ?? 0);
      refusals.set(error, {
        counterId: refused.counterId,
        kind: limit,
        estimate: admitting?.estimate ?? 0,
        refuse,
      });
      throw error;
    }
    snapshots.forEach((s, i) => {
      const at = 1 + i * 7;
      this.book.granted(
        s,
        { requests: reply[at] ?? 0, tokens: reply[at + 1] ?? 0, budget: reply[at + 2] ?? 0 },
        now,
      );
      this.floors.learn(s.plan, s.index, {
        rpmUsed: reply[at + 3] ?? -1,
        tpmUsed: reply[at + 4] ?? -1,
        spentMicros: reply[at + 5] ?? -1,
        reservedMicros: reply[at + 6] ?? -1,
      });
    });
    return true;
  }

  /** Undoes a lease call that got no reply (fire-and-forget) and applies that to the leases now. */
  private undo(snapshots: LeaseSnapshot[], keys: string[], now: number, client: Redis & LimitCommands): void {
    const args: Array<string | number> = [WINDOW_TTL_MS, now + LEASE_HOLD_MS];
    for (const s of snapshots) args.push(...undoArgs(s));
    client
      .gatewayLimitsUndo(keys.length, ...keys, ...args)
      .catch((error: unknown) => this.connection.reportFailureIfLinkDown("settle", error));
    for (const s of snapshots) this.book.undone(s, now);
  }
}

/** Defines the limit scripts on a link (each link needs its own definitions). */
export function defineScripts(client: Redis): Redis & LimitCommands {
  client.defineCommand("gatewayLimitsLease", { lua: LEASE_LUA });
  client.defineCommand("gatewayLimitsUndo", { lua: UNDO_LUA });
  return client as Redis & LimitCommands;
}

/** Redis answered with an error (e.g. OOM, a script error): it is there but cannot serve the shared counters. */
function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === "ReplyError";
}
