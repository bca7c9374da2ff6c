/**
 * The token bucket as one Redis Lua script, so refill, check and take happen atomically on the
 * server that every process shares (https://redis.io/docs/latest/develop/interactive/programmability/eval-intro/).
 * Time is Redis's own `TIME`, one clock for every process. The bucket is a hash of its tokens
 * (`t`, kept as text: Redis truncates Lua numbers in replies) and the last update in ms (`u`);
 * it expires once it would be full again, which is the same as not existing.
 *
 * KEYS[1] the bucket; ARGV[1] burst, ARGV[2] tokens per ms, ARGV[3] 1 to take a token, 0 to look.
 * Returns `{ admitted (1 or 0), tokens left as text }`.
 */
export const TOKEN_BUCKET_SCRIPT = `
local burst = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local spend = ARGV[3] == '1'
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(state[1]) or burst
local updated = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - updated) * per_ms)
local admitted = 0
if tokens >= 1 then
  admitted = 1
  if spend then tokens = tokens - 1 end
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'u', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / per_ms) + 1000)
return { admitted, string.format('%.17g', tokens) }
`;
