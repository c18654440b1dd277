/**
 * Lua scripts run atomically by Redis (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/),
 * sent once and then called by SHA through ioredis `defineCommand` (EVALSHA, falling back to EVAL on NOSCRIPT).
 * Time comes from the gateway's clock as an argument (never Redis TIME) so tests can move it; TTLs are relative
 * (PEXPIRE), so they hold whatever that clock says.
 *
 * Keys per subject, in this order (every key is passed in KEYS, none is built inside a script):
 *   admit:  rpm counter of the window, tpm counter of the window, budget hash, reservation sorted set
 *   settle: tpm counter of the settle time's window, budget hash, reservation sorted set
 * Budget hash fields `spent` and `reserved` are integer micro-USD. The reservation set holds one member
 * `<admission id>:<micro-USD>` per call in flight, scored by its expiry (clock ms); expired members are
 * subtracted from `reserved` by the next admit for that budget. Amounts stay exact below 2^53 micro-USD.
 */

/**
 * ARGV: now, reservation member, reservation expiry, window TTL ms, estimate micro-USD, then per subject
 * (5 each): rpm limit, tpm limit, budget micro-USD (-1 = none for all three), database spend micro-USD, budget
 * TTL ms. Returns `{-1, then per subject: rpm used, tpm used, spent, reserved}` when admitted (the counters
 * after counting this call; -1 where the subject has no such limit), else `{subject index, kind, used[,
 * reserved]}` with kind 1 = rpm, 2 = tpm, 3 = budget, and nothing counted. All-or-nothing across subjects.
 */
export const ADMIT_LUA = `
local now = tonumber(ARGV[1])
local member = ARGV[2]
local expiry = ARGV[3]
local windowTtl = ARGV[4]
local estimate = tonumber(ARGV[5])
local n = #KEYS / 4
for i = 0, n - 1 do
  local k = i * 4
  local a = 6 + i * 5
  local rpm = tonumber(ARGV[a])
  if rpm >= 0 then
    local used = tonumber(redis.call('GET', KEYS[k + 1]) or '0')
    if used >= rpm then return {i, 1, used} end
  end
  local tpm = tonumber(ARGV[a + 1])
  if tpm >= 0 then
    local used = tonumber(redis.call('GET', KEYS[k + 2]) or '0')
    if used >= tpm then return {i, 2, used} end
  end
  local max = tonumber(ARGV[a + 2])
  if max >= 0 then
    local budget, reservations = KEYS[k + 3], KEYS[k + 4]
    local expired = redis.call('ZRANGEBYSCORE', reservations, '-inf', now)
    if #expired > 0 then
      local freed = 0
      for _, m in ipairs(expired) do freed = freed + tonumber(string.match(m, ':(%d+)$')) end
      redis.call('ZREMRANGEBYSCORE', reservations, '-inf', now)
      redis.call('HINCRBY', budget, 'reserved', -freed)
    end
    local v = redis.call('HMGET', budget, 'spent', 'reserved')
    local spent = tonumber(v[1] or '0')
    local reserved = tonumber(v[2] or '0')
    local seed = tonumber(ARGV[a + 3])
    if v[1] == false or seed > spent then
      redis.call('HSET', budget, 'spent', ARGV[a + 3])
      spent = seed
    end
    redis.call('PEXPIRE', budget, ARGV[a + 4])
    if spent >= max or spent + reserved + estimate > max then return {i, 3, spent, reserved} end
  end
end
local counted = {-1}
for i = 0, n - 1 do
  local k = i * 4
  local a = 6 + i * 5
  local rpmUsed, tpmUsed, spent, reserved = -1, -1, -1, -1
  if tonumber(ARGV[a]) >= 0 then
    rpmUsed = redis.call('INCR', KEYS[k + 1])
    if rpmUsed == 1 then redis.call('PEXPIRE', KEYS[k + 1], windowTtl) end
  end
  if tonumber(ARGV[a + 1]) >= 0 then tpmUsed = tonumber(redis.call('GET', KEYS[k + 2]) or '0') end
  if tonumber(ARGV[a + 2]) >= 0 then
    if estimate > 0 then
      redis.call('HINCRBY', KEYS[k + 3], 'reserved', ARGV[5])
      redis.call('ZADD', KEYS[k + 4], expiry, member)
      redis.call('PEXPIRE', KEYS[k + 4], ARGV[a + 4])
    end
    local v = redis.call('HMGET', KEYS[k + 3], 'spent', 'reserved')
    spent = tonumber(v[1] or '0')
    reserved = tonumber(v[2] or '0')
  end
  counted[#counted + 1] = rpmUsed
  counted[#counted + 1] = tpmUsed
  counted[#counted + 1] = spent
  counted[#counted + 1] = reserved
end
return counted
`;

/**
 * ARGV: reservation member ('' when nothing was reserved), its micro-USD, cost micro-USD, tokens, window TTL
 * ms, then one flag string per subject: contains `t` to count tokens, `b` to settle the budget. Removes the
 * reservation only if it is still there (an expired one was already reclaimed), adds the cost to `spent` and
 * the tokens to the window; a budget hash that no longer exists is left alone. Every key written has a TTL.
 * Returns 0.
 */
export const SETTLE_LUA = `
local member = ARGV[1]
local reservedAmount = ARGV[2]
local cost = tonumber(ARGV[3])
local tokens = tonumber(ARGV[4])
local windowTtl = ARGV[5]
for i = 0, #KEYS / 3 - 1 do
  local k = i * 3
  local flags = ARGV[6 + i]
  if tokens > 0 and string.find(flags, 't', 1, true) then
    if redis.call('INCRBY', KEYS[k + 1], ARGV[4]) == tokens then redis.call('PEXPIRE', KEYS[k + 1], windowTtl) end
  end
  -- A budget hash that has expired belongs to a finished period: nothing to settle (and no key without TTL).
  if string.find(flags, 'b', 1, true) and redis.call('EXISTS', KEYS[k + 2]) == 1 then
    if member ~= '' and redis.call('ZREM', KEYS[k + 3], member) == 1 then
      redis.call('HINCRBY', KEYS[k + 2], 'reserved', '-' .. reservedAmount)
    end
    if cost > 0 then redis.call('HINCRBY', KEYS[k + 2], 'spent', ARGV[3]) end
  end
end
return 0
`;
