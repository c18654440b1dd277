/**
 * LiteLLM's `max_parallel_requests` of a key or user: a call is admitted only while fewer than N calls of that
 * subject are in flight, on all instances together. Each call in flight holds a **slot**.
 *
 * - With Redis ({@link RedisSlots}): a sorted set per subject, `<prefix><scope>:<id>:parallel`, one member per
 *   call in flight (`<instance>.<n>`) scored by its expiry (gateway clock ms). Taking slots is one script call
 *   for every subject of the call, all or none ({@link SLOTS_LUA}: expired members dropped, counted, added); a
 *   finished call removes its member (fire-and-forget). Members live {@link SLOT_HOLD_MS} and the holder renews
 *   those of its calls still in flight every {@link SLOT_RENEW_MS}, so an instance that crashed stops holding a
 *   key's slots within 30 s. This costs a keyed call a Redis round trip at admission (keys without the field pay
 *   nothing).
 * - In process ({@link LocalSlots}): a count per subject (the in-process admitter, and the fallback while Redis
 *   is gone: then each instance enforces N on its own).
 *
 * Refusal ({@link parallelError}): 429 `rate_limit_error` with LiteLLM's wording, "Max parallel request limit
 * reached", and `retry-after: 1` (a slot frees whenever a call finishes).
 */
import type { Redis } from "ioredis";
import { GatewayError } from "../errors/gateway-error.js";
import { describeSubject, type SubjectPlan } from "./rules.js";

/** How long a slot's member lives in Redis without renewal, ms of the gateway clock (a lease's budget hold). */
export const SLOT_HOLD_MS = 30_000;
/** How often the holder renews the members of its calls still in flight, ms of wall time. */
export const SLOT_RENEW_MS = 10_000;

/**
 * 429 `rate_limit_error` for a subject whose `max_parallel_requests` calls are in flight, e.g. `Max parallel
 * request limit reached. Hit limit for key "ci": max_parallel_requests 2, calls in flight 2. Retry when one
 * finishes.` (LiteLLM's `parallel_request_limiter` answers 429 "Max parallel request limit reached" with
 * `retry-after`). `retry-after: 1`.
 */
export function parallelError(plan: SubjectPlan, inFlight: number): GatewayError {
  const message =
    `Max parallel request limit reached. Hit limit for ${describeSubject(plan.subject)}: ` +
    `max_parallel_requests ${plan.parallel}, calls in flight ${inFlight}. Retry when one finishes.`;
  return new GatewayError(429, message, {
    type: "rate_limit_error",
    code: "429",
    headers: { "retry-after": "1" },
  });
}

/** Whether the plan carries `max_parallel_requests`. */
export const hasParallel = (plan: SubjectPlan): boolean => plan.parallel >= 0;

/** The plans of a call that carry `max_parallel_requests`. */
export const parallelPlans = (plans: SubjectPlan[]): SubjectPlan[] => plans.filter(hasParallel);

/** Counts of calls in flight per subject, in this process. */
export class LocalSlots {
  private readonly inFlight = new Map<string, number>();

  /**
   * Takes a slot of every plan with a parallel limit, all or none.
   * @throws GatewayError {@link parallelError} when one is full (nothing taken).
   */
  take(plans: SubjectPlan[]): void {
    for (const plan of plans) {
      if (plan.parallel < 0) continue;
      const used = this.inFlight.get(plan.counterId) ?? 0;
      if (used >= plan.parallel) throw parallelError(plan, used);
    }
    for (const plan of plans) {
      if (plan.parallel >= 0) this.inFlight.set(plan.counterId, (this.inFlight.get(plan.counterId) ?? 0) + 1);
    }
  }

  /** Gives back the slots {@link LocalSlots.take} took for `plans`. */
  give(plans: SubjectPlan[]): void {
    for (const plan of plans) {
      if (plan.parallel < 0) continue;
      const used = (this.inFlight.get(plan.counterId) ?? 0) - 1;
      if (used > 0) this.inFlight.set(plan.counterId, used);
      else this.inFlight.delete(plan.counterId);
    }
  }
}

/**
 * Takes one slot in each set (KEYS, one per subject), all or none. ARGV: now (clock ms), the members' expiry
 * (clock ms), the set's TTL ms, the member, then one limit per key. Returns `{-1}` when taken, else
 * `{index of the full key, calls in flight there}` with nothing added.
 */
export const SLOTS_LUA = `
local now = ARGV[1]
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local n = redis.call('ZCARD', key)
  if n >= tonumber(ARGV[4 + i]) then return {i - 1, n} end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[2], ARGV[4])
  redis.call('PEXPIRE', key, ARGV[3])
end
return {-1}
`;

/**
 * Renews (ARGV[1] = expiry, clock ms; ARGV[2] = the sets' TTL ms) or, with ARGV[1] = '', removes the members
 * ARGV[3..] from the sets KEYS (pairwise: KEYS[i] holds ARGV[2 + i]). A member already gone stays gone.
 */
export const SLOTS_KEEP_LUA = `
for i, key in ipairs(KEYS) do
  if ARGV[1] == '' then
    redis.call('ZREM', key, ARGV[2 + i])
  elseif redis.call('ZADD', key, 'XX', 'CH', ARGV[1], ARGV[2 + i]) == 1 then
    redis.call('PEXPIRE', key, ARGV[2])
  end
end
return 0
`;

interface SlotCommands {
  gatewayParallelTake(numKeys: number, ...args: Array<string | number>): Promise<number[]>;
  gatewayParallelKeep(numKeys: number, ...args: Array<string | number>): Promise<number>;
}

/** A call's slots in Redis: its member in each subject's set. */
interface HeldSlots {
  keys: string[];
  member: string;
}

/** Slots shared through Redis; see the module comment. */
export class RedisSlots {
  private readonly client: Redis & SlotCommands;
  private readonly held = new Set<HeldSlots>();
  private next = 0;
  private lastRenew = performance.now();

  /**
   * @param client the command link; `instance` makes members unique across instances; `keyPrefix` as the
   *   connection's.
   */
  constructor(
    client: Redis,
    private readonly keyPrefix: string,
    private readonly instance: string,
  ) {
    client.defineCommand("gatewayParallelTake", { lua: SLOTS_LUA });
    client.defineCommand("gatewayParallelKeep", { lua: SLOTS_KEEP_LUA });
    this.client = client as Redis & SlotCommands;
  }

  /**
   * Takes a slot of each plan (all with a parallel limit) in one script call; resolves the function that gives
   * them back (call it once, when the call finishes).
   * @throws GatewayError {@link parallelError} when one is full; what the Redis call throws.
   */
  async take(plans: SubjectPlan[], now: number): Promise<() => void> {
    const keys = plans.map((plan) => `${this.keyPrefix}${plan.counterId}:parallel`);
    const member = `${this.instance}.${this.next++}`;
    const reply = await this.client.gatewayParallelTake(
      keys.length,
      ...keys,
      now,
      now + SLOT_HOLD_MS,
      2 * SLOT_HOLD_MS,
      member,
      ...plans.map((plan) => plan.parallel),
    );
    const [full = -1, inFlight = 0] = reply;
    const refused = plans[full];
    if (refused !== undefined) throw parallelError(refused, inFlight);
    const slots: HeldSlots = { keys, member };
    this.held.add(slots);
    return () => {
      if (!this.held.delete(slots)) return;
      const members = keys.map(() => member);
      this.client.gatewayParallelKeep(keys.length, ...keys, "", 0, ...members).catch(() => {
        // Not removed: the member expires after SLOT_HOLD_MS.
      });
    };
  }

  /** Renews the members of calls still in flight when {@link SLOT_RENEW_MS} has passed (fire-and-forget). */
  renew(now: number): void {
    const wall = performance.now();
    if (wall - this.lastRenew < SLOT_RENEW_MS || this.held.size === 0) return;
    this.lastRenew = wall;
    const keys: string[] = [];
    const members: string[] = [];
    for (const slots of this.held) {
      for (const key of slots.keys) {
        keys.push(key);
        members.push(slots.member);
      }
    }
    this.client
      .gatewayParallelKeep(keys.length, ...keys, now + SLOT_HOLD_MS, 2 * SLOT_HOLD_MS, ...members)
      .catch(() => {
        // Tried again at the next renewal, well before the members expire.
      });
  }
}
