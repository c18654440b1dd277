/**
 * Lua scripts run atomically by Redis (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/),
 * sent once and then called by SHA through ioredis `defineCommand` (EVALSHA, falling back to EVAL on NOSCRIPT).
 * Time comes from the gateway's clock as an argument (never Redis TIME) so tests can move it; TTLs are relative
 * (PEXPIRE), so they hold whatever that clock says.
 *
 * The shared state, per subject (docs/leases.md): `rpm:<window>` counts requests admitted or held by open
 * leases in the window; `tpm:<window>` counts tokens settled plus token room held by open leases; the budget
 * hash (`spent`, `reserved`, integer micro-USD) and its sorted set of open budget leases, one member
 * `<lease id>:<micro-USD held>` per lease scored by its expiry (clock ms). An expired member is subtracted from
 * `reserved` by the next lease call for that budget. So `settled + open leases <= limit` holds in Redis for
 * every counter. Amounts stay exact below 2^53.
 *
 * Keys per subject, in this order (every key is passed in KEYS, none is built inside a script):
 *   rpm counter of the window, tpm counter of the window, budget hash, lease set, then the budget hash and lease
 *   set of the period the previous lease was taken in (the same keys unless the period rolled over);
 *   after all subjects, one marker key that records the call ran and what it granted (read by {@link UNDO_LUA}).
 */

import type { LeaseSnapshot } from "./lease.js";
import { budgetCounterTtlMs } from "./rules.js";

/** ARGV entries per subject of {@link LEASE_LUA}. */
export const LEASE_ARGS_PER_SUBJECT = 17;
/** KEYS per subject of {@link LEASE_LUA}. */
export const LEASE_KEYS_PER_SUBJECT = 6;

/**
 * Returns the previous lease of each subject (settling what it spent) and, when admitting, takes a new one, in
 * one atomic step, all-or-nothing across subjects.
 *
 * ARGV: now, window TTL ms, admit (1 = a call needs the new lease, so check the limits and grant at least one
 * request, one token of room and `minBudget`; 2 = a top-up of a call in flight, so check the budgets only and
 * grant at least `minBudget`, requests and token room only as demand and room allow; 0 = return only; 3 = return
 * and keep, per subject, exactly the slice wanted (one call's: a request, its tokens, its estimate) when every
 * amount of it is at most a quarter of what remains, else nothing; 0 and 3 are never refused), marker TTL ms,
 * then per subject (17 each): rpm limit, tpm limit, budget micro-USD (-1 = none for all three), database
 * spend micro-USD (the budget's floor), budget TTL ms, requests wanted, requests returned (unused, same window),
 * token room wanted, tokens delta (tokens settled minus room returned), previous member ('' = none), its
 * micro-USD, spent micro-USD to add, new member id, carry micro-USD (reservations of calls still in flight, kept
 * held), budget wanted micro-USD, the call's estimate micro-USD (the least budget grant; grants are multiples),
 * the new member's expiry (clock ms).
 *
 * A grant is `max(least, min(wanted, floor(remaining / 4)))`: sized from demand, at most a quarter of what
 * remains, so small limits degrade to one request per lease and stay exact. A kept slice follows the same
 * quarter rule, so near a limit nothing is kept and every call goes to Redis.
 *
 * Returns `{-1, then per subject: requests, token room, budget micro-USD granted, rpm used, tpm used, spent,
 * reserved}` (the counters after this call; -1 where the subject has no such limit), else `{subject index, kind,
 * used[, reserved]}` with kind 1 = rpm, 2 = tpm, 3 = budget, and nothing written but housekeeping (expired
 * leases reclaimed, the budget raised to its floor).
 */
export const LEASE_LUA = `
local now = tonumber(ARGV[1])
local windowTtl = ARGV[2]
local admit = ARGV[3] == '1' or ARGV[3] == '2'
local topUp = ARGV[3] == '2'
local keep = ARGV[3] == '3'
local least = topUp and 0 or 1
local n = (#KEYS - 1) / 6
local seen = {}
for i = 0, n - 1 do
  local k = i * 6
  local a = 5 + i * 17
  local s = {rUsed = -1, tUsed = -1, spent = -1, reserved = -1}
  local rpm = tonumber(ARGV[a])
  if rpm >= 0 then
    s.rUsed = tonumber(redis.call('GET', KEYS[k + 1]) or '0') - tonumber(ARGV[a + 6])
    if admit and not topUp and s.rUsed >= rpm then return {i, 1, s.rUsed} end
  end
  local tpm = tonumber(ARGV[a + 1])
  if tpm >= 0 then
    s.tUsed = tonumber(redis.call('GET', KEYS[k + 2]) or '0') + tonumber(ARGV[a + 8])
    if admit and not topUp and s.tUsed >= tpm then return {i, 2, s.tUsed} end
  end
  local max = tonumber(ARGV[a + 2])
  if max >= 0 then
    local budget, leases = KEYS[k + 3], KEYS[k + 4]
    local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
    if #expired > 0 then
      local freed = 0
      for _, m in ipairs(expired) do freed = freed + tonumber(string.match(m, ':(%d+)$')) end
      redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
      redis.call('HINCRBY', budget, 'reserved', -freed)
    end
    local v = redis.call('HMGET', budget, 'spent', 'reserved')
    local stored = tonumber(v[1] or '0')
    local seed = tonumber(ARGV[a + 3])
    if v[1] == false then
      redis.call('HSET', budget, 'spent', ARGV[a + 3])
      stored = seed
    end
    redis.call('PEXPIRE', budget, ARGV[a + 4])
    local reserved = tonumber(v[2] or '0') + tonumber(ARGV[a + 13])
    local old = ARGV[a + 9]
    if old ~= '' and KEYS[k + 5] == budget and redis.call('ZSCORE', leases, old) then
      reserved = reserved - tonumber(ARGV[a + 10])
    end
    -- What this lease spent, then raised to the database's spend (which may already include it).
    local spent = math.max(stored, seed)
    if KEYS[k + 5] == budget then spent = math.max(stored + tonumber(ARGV[a + 11]), seed) end
    s.stored, s.spent, s.reserved = stored, spent, reserved
    if admit and (spent >= max or spent + reserved + tonumber(ARGV[a + 15]) > max) then
      return {i, 3, spent, reserved}
    end
  end
  seen[i] = s
end
local out = {-1}
local marker = {}
for i = 0, n - 1 do
  local k = i * 6
  local a = 5 + i * 17
  local s = seen[i]
  local gr, gt, gb = 0, 0, 0
  local rpm = tonumber(ARGV[a])
  local kr, kt, kb = 0, 0, 0
  if keep and tonumber(ARGV[a + 5]) > 0 then
    local fits = true
    local tpm, max = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    if rpm >= 0 then kr = tonumber(ARGV[a + 5]); fits = kr <= math.floor((rpm - s.rUsed) / 4) end
    if fits and tpm >= 0 then kt = tonumber(ARGV[a + 7]); fits = kt <= math.floor((tpm - s.tUsed) / 4) end
    if fits and max >= 0 then
      kb = tonumber(ARGV[a + 14])
      fits = s.spent < max and kb <= math.floor((max - s.spent - s.reserved) / 4)
    end
    if not fits then kr, kt, kb = 0, 0, 0 end
  end
  if rpm >= 0 then
    if admit then gr = math.max(least, math.min(tonumber(ARGV[a + 5]), math.floor((rpm - s.rUsed) / 4))) end
    if keep then gr = kr end
    local delta = gr - tonumber(ARGV[a + 6])
    if delta ~= 0 then
      redis.call('INCRBY', KEYS[k + 1], delta)
      redis.call('PEXPIRE', KEYS[k + 1], windowTtl)
    end
    s.rUsed = s.rUsed + gr
  end
  local tpm = tonumber(ARGV[a + 1])
  if tpm >= 0 then
    if admit then gt = math.max(least, math.min(tonumber(ARGV[a + 7]), math.floor((tpm - s.tUsed) / 4))) end
    if keep then gt = kt end
    local delta = gt + tonumber(ARGV[a + 8])
    if delta ~= 0 then
      redis.call('INCRBY', KEYS[k + 2], delta)
      redis.call('PEXPIRE', KEYS[k + 2], windowTtl)
    end
    s.tUsed = s.tUsed + gt
  end
  local max = tonumber(ARGV[a + 2])
  if max >= 0 then
    local budget, leases, oldBudget, oldLeases = KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6]
    local old = ARGV[a + 9]
    if old ~= '' and redis.call('ZREM', oldLeases, old) == 1 then
      redis.call('HINCRBY', oldBudget, 'reserved', '-' .. ARGV[a + 10])
    end
    if s.spent ~= s.stored then redis.call('HSET', budget, 'spent', s.spent) end
    if oldBudget ~= budget and tonumber(ARGV[a + 11]) > 0 and redis.call('EXISTS', oldBudget) == 1 then
      redis.call('HINCRBY', oldBudget, 'spent', ARGV[a + 11])
    end
    local minBudget = tonumber(ARGV[a + 15])
    if admit then
      gb = math.max(minBudget, math.min(tonumber(ARGV[a + 14]), math.floor((max - s.spent - s.reserved) / 4)))
      if minBudget > 0 then gb = gb - gb % minBudget end
    end
    if keep then gb = kb end
    local amount = tonumber(ARGV[a + 13]) + gb
    if amount > 0 then
      redis.call('ZADD', leases, ARGV[a + 16], ARGV[a + 12] .. ':' .. amount)
      redis.call('HINCRBY', budget, 'reserved', amount)
      redis.call('PEXPIRE', leases, ARGV[a + 4])
    end
    s.reserved = s.reserved + gb
  end
  out[#out + 1] = gr
  out[#out + 1] = gt
  out[#out + 1] = gb
  out[#out + 1] = s.rUsed
  out[#out + 1] = s.tUsed
  out[#out + 1] = s.spent
  out[#out + 1] = s.reserved
  marker[#marker + 1] = gr .. ',' .. gt .. ',' .. gb
end
redis.call('SET', KEYS[#KEYS], table.concat(marker, ' '), 'PX', ARGV[4])
return out
`;

/** ARGV entries per subject of {@link UNDO_LUA}. */
export const UNDO_ARGS_PER_SUBJECT = 10;

/**
 * Sent right behind a lease call that got no reply, on the same link (so it runs after that call if that call
 * ever runs). Either way it leaves the state as if the call had returned the previous lease and granted
 * nothing: if the marker says the call ran, it takes back the grants (this instance never used them); if not,
 * it applies the return itself. The carry stays held under the new member id. Same KEYS as {@link LEASE_LUA}.
 *
 * ARGV: window TTL ms, lease expiry, then per subject (10 each): rpm limited (1/0), tpm limited (1/0), budget
 * limited (1/0), requests returned, tokens delta, previous member, its micro-USD, spent micro-USD to add, new
 * member id, carry micro-USD. Returns 1 when the call had run, else 0.
 */
export const UNDO_LUA = `
local windowTtl = ARGV[1]
local expiry = ARGV[2]
local n = (#KEYS - 1) / 6
local done = redis.call('GET', KEYS[#KEYS])
local grants = {}
if done then for g in string.gmatch(done, '%S+') do grants[#grants + 1] = g end end
for i = 0, n - 1 do
  local k = i * 6
  local a = 3 + i * 10
  local gr, gt, gb = 0, 0, 0
  if done then
    gr, gt, gb = string.match(grants[i + 1], '^(%-?%d+),(%-?%d+),(%-?%d+)$')
    gr, gt, gb = tonumber(gr), tonumber(gt), tonumber(gb)
  end
  local carry = tonumber(ARGV[a + 9])
  if ARGV[a] == '1' then
    local delta = done and -gr or -tonumber(ARGV[a + 3])
    if delta ~= 0 then redis.call('INCRBY', KEYS[k + 1], delta); redis.call('PEXPIRE', KEYS[k + 1], windowTtl) end
  end
  if ARGV[a + 1] == '1' then
    local delta = done and -gt or tonumber(ARGV[a + 4])
    if delta ~= 0 then redis.call('INCRBY', KEYS[k + 2], delta); redis.call('PEXPIRE', KEYS[k + 2], windowTtl) end
  end
  if ARGV[a + 2] == '1' then
    local budget, leases, oldBudget, oldLeases = KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6]
    if done then
      if gb > 0 then
        if redis.call('ZREM', leases, ARGV[a + 8] .. ':' .. (carry + gb)) == 1 then
          redis.call('HINCRBY', budget, 'reserved', -(carry + gb))
          if carry > 0 then
            redis.call('ZADD', leases, expiry, ARGV[a + 8] .. ':' .. carry)
            redis.call('HINCRBY', budget, 'reserved', carry)
          end
        end
      end
    else
      local old = ARGV[a + 5]
      if old ~= '' and redis.call('ZREM', oldLeases, old) == 1 then
        redis.call('HINCRBY', oldBudget, 'reserved', '-' .. ARGV[a + 6])
      end
      if tonumber(ARGV[a + 7]) > 0 and redis.call('EXISTS', oldBudget) == 1 then
        redis.call('HINCRBY', oldBudget, 'spent', ARGV[a + 7])
      end
      if carry > 0 and redis.call('EXISTS', budget) == 1 then
        redis.call('ZADD', leases, expiry, ARGV[a + 8] .. ':' .. carry)
        redis.call('HINCRBY', budget, 'reserved', carry)
      end
    end
  end
end
return done and 1 or 0
`;

/** Redis keys of one subject for a lease call, in {@link LEASE_LUA}'s order (before the marker key). */
export function leaseKeys(base: string, s: LeaseSnapshot): string[] {
  const budget = `${base}:budget:${s.plan.period}`;
  const oldBudget = `${base}:budget:${s.oldPeriod}`;
  return [
    `${base}:rpm:${s.index}`,
    `${base}:tpm:${s.index}`,
    budget,
    `${budget}:leases`,
    oldBudget,
    `${oldBudget}:leases`,
  ];
}

/** {@link LEASE_LUA}'s per-subject ARGV (`now` and the member's expiry in clock ms). */
export function leaseArgs(s: LeaseSnapshot, now: number, memberExpiry: number): Array<string | number> {
  const { plan } = s;
  const args: Array<string | number> = [
    plan.rpm,
    plan.tpm,
    plan.maxMicros,
    plan.seedMicros,
    budgetCounterTtlMs(plan.subject, now),
    s.wantRequests,
    s.returned,
    s.wantTokens,
    s.tokenDelta,
    s.oldMember,
    s.oldAmount,
    s.spent,
    s.newId,
    s.carry,
    s.wantBudget,
    s.estimate,
    memberExpiry,
  ];
  if (args.length !== LEASE_ARGS_PER_SUBJECT) throw new Error("lease arguments out of step with the script");
  return args;
}

/** {@link UNDO_LUA}'s per-subject ARGV. */
export function undoArgs(s: LeaseSnapshot): Array<string | number> {
  const { plan } = s;
  const args: Array<string | number> = [
    plan.rpm >= 0 ? 1 : 0,
    plan.tpm >= 0 ? 1 : 0,
    plan.maxMicros >= 0 ? 1 : 0,
    s.returned,
    s.tokenDelta,
    s.oldMember,
    s.oldAmount,
    s.spent,
    s.newId,
    s.carry,
  ];
  if (args.length !== UNDO_ARGS_PER_SUBJECT) throw new Error("undo arguments out of step with the script");
  return args;
}
