/**
 * The Redis frontier's operations, each a Lua script that Redis runs alone:
 * no other client's command runs while one of them does, so each is one
 * atomic step, as a stretch of code between two `await`s is in one process.
 *
 * The keys of a crawl named NAME (the `{NAME}` hash tag keeps them in one
 * Redis Cluster slot):
 * - `coroutine-crawler:{NAME}:seen`, a set: every URL ever queued (the chapter's `seen_urls`);
 * - `…:queue`, a list of queue items as JSON, taken from the left (the chapter's `Queue`);
 * - `…:leases`, a sorted set: each URL taken and not finished, scored by its lease's deadline
 *   (milliseconds, Redis's clock);
 * - `…:owners` and `…:items`, hashes: who holds each lease, and the item to queue again if it expires;
 * - `…:records`, a hash: each URL's one record, as JSON;
 * - `…:workers`, a hash: each process that took URLs, and when it last said it was alive.
 *
 * The count asyncio's queue keeps in `_unfinished_tasks` is not stored: it
 * is the queue's length plus the number of leases, so it cannot drift.
 *
 * @module
 */

/** Redis's clock in milliseconds, shared by every script (all processes read the same clock). */
const NOW = `
local function now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
`;

/**
 * ADD: KEYS seen, queue. ARGV channel, then (url, item) pairs.
 * Queues each URL not seen, marking it seen in the same step. Returns how many were new.
 */
export const ADD = `
local added = 0
for i = 2, #ARGV, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    added = added + 1
  end
end
if added > 0 then redis.call('PUBLISH', ARGV[1], 'queued') end
return added
`;

/**
 * TAKE: KEYS queue, leases, owners, items, records, workers. ARGV channel, owner, lease ms, count.
 * First puts back at the front of the queue every URL whose lease has expired (its
 * process died, or stopped renewing); then takes up to `count` items, leasing each to
 * `owner`. An item whose URL already has a record, or is leased, is dropped: a worker
 * whose lease expired finished it after all. Returns the queue's length and the number
 * of leases after the step, then the items taken.
 */
export const TAKE = `${NOW}
local t = now()
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', t, 'LIMIT', 0, 1000)
for _, url in ipairs(expired) do
  local item = redis.call('HGET', KEYS[4], url)
  if item then redis.call('LPUSH', KEYS[1], item) end
  redis.call('ZREM', KEYS[2], url)
  redis.call('HDEL', KEYS[3], url)
  redis.call('HDEL', KEYS[4], url)
end
if #expired > 0 then redis.call('PUBLISH', ARGV[1], 'queued') end
redis.call('HSET', KEYS[6], ARGV[2], t)
local deadline = t + tonumber(ARGV[3])
local count = tonumber(ARGV[4])
local reply = {0, 0}
while #reply - 2 < count do
  local item = redis.call('LPOP', KEYS[1])
  if not item then break end
  local url = cjson.decode(item).url
  if redis.call('HEXISTS', KEYS[5], url) == 0 and not redis.call('ZSCORE', KEYS[2], url) then
    redis.call('ZADD', KEYS[2], deadline, url)
    redis.call('HSET', KEYS[3], url, ARGV[2])
    redis.call('HSET', KEYS[4], url, item)
    reply[#reply + 1] = item
  end
end
reply[1] = redis.call('LLEN', KEYS[1])
reply[2] = redis.call('ZCARD', KEYS[2])
return reply
`;

/**
 * FINISH: KEYS seen, queue, leases, owners, items, records. ARGV channel, owner, url,
 * record JSON, then (url, item) pairs of the URLs its visit found.
 * In one step: queues each found URL not seen; stores the record (a page's with
 * `numNewUrls` set to the URLs really queued; a redirect's stays 0) unless the URL has one already; drops the lease if `owner`
 * still holds it. Publishes `done` when nothing is queued or leased any more.
 * Returns 1 if the record was stored, else 0, and the number of URLs queued.
 */
export const FINISH = `
local added = 0
for i = 5, #ARGV, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    added = added + 1
  end
end
local url = ARGV[3]
local stored = 0
if redis.call('HEXISTS', KEYS[6], url) == 0 then
  local record = cjson.decode(ARGV[4])
  if record.nextUrl == cjson.null then record.numNewUrls = added end
  redis.call('HSET', KEYS[6], url, cjson.encode(record))
  stored = 1
end
if redis.call('HGET', KEYS[4], url) == ARGV[2] then
  redis.call('ZREM', KEYS[3], url)
  redis.call('HDEL', KEYS[4], url)
  redis.call('HDEL', KEYS[5], url)
end
if redis.call('LLEN', KEYS[2]) == 0 and redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('PUBLISH', ARGV[1], 'done')
elseif added > 0 then
  redis.call('PUBLISH', ARGV[1], 'queued')
end
return {stored, added}
`;

/**
 * RELEASE: KEYS queue, leases, owners, items. ARGV channel, owner, then items as JSON.
 * Each item whose URL `owner` still holds goes back to the front of the queue, its lease
 * dropped, for another process or a later run. Returns how many went back.
 */
export const RELEASE = `
local released = 0
for i = 3, #ARGV do
  local url = cjson.decode(ARGV[i]).url
  if redis.call('HGET', KEYS[3], url) == ARGV[2] then
    redis.call('ZREM', KEYS[2], url)
    redis.call('HDEL', KEYS[3], url)
    redis.call('HDEL', KEYS[4], url)
    redis.call('LPUSH', KEYS[1], ARGV[i])
    released = released + 1
  end
end
if released > 0 then redis.call('PUBLISH', ARGV[1], 'queued') end
return released
`;

/**
 * RENEW: KEYS leases, owners, workers. ARGV owner, lease ms, then URLs.
 * Moves the deadline of each lease `owner` still holds, and notes that it is alive.
 * Returns how many of the URLs it no longer holds (their leases expired).
 */
export const RENEW = `${NOW}
local t = now()
redis.call('HSET', KEYS[3], ARGV[1], t)
local deadline = t + tonumber(ARGV[2])
local lost = 0
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then
    redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[i])
  else
    lost = lost + 1
  end
end
return lost
`;

/**
 * STATUS: KEYS queue, leases, owners, records, seen, workers.
 * One consistent reading: queued, leased, records, seen, Redis's clock, then for each
 * process (owner, last seen alive, leases held).
 */
export const STATUS = `${NOW}
local held = {}
for _, owner in ipairs(redis.call('HVALS', KEYS[3])) do held[owner] = (held[owner] or 0) + 1 end
local reply = {redis.call('LLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('HLEN', KEYS[4]), redis.call('SCARD', KEYS[5]), now()}
local workers = redis.call('HGETALL', KEYS[6])
for i = 1, #workers, 2 do
  reply[#reply + 1] = workers[i]
  reply[#reply + 1] = tonumber(workers[i + 1])
  reply[#reply + 1] = held[workers[i]] or 0
end
return reply
`;
