/**
 * The Redis frontier's operations, each a Lua script that Redis runs alone:
 * no other client's command runs while one of them does, so each is one
 * atomic step, as a stretch of code between two `await`s is in one process.
 *
 * The keys of a crawl named NAME (the `{NAME}` hash tag keeps them in one
 * Redis Cluster slot; see below for a Cluster). Every script gets the nine fixed keys, in this order:
 * 1. `coroutine-crawler:{NAME}:seen`, a set: every URL ever queued (the chapter's `seen_urls`);
 * 2. `…:hosts`, a sorted set: each origin with URLs queued, scored by the time (ms, Redis's
 *    clock) its next request may start; `FULL` (9e15) while all its slots are taken or its
 *    `robots.txt` is being read;
 * 3. `…:leases`, a sorted set: each URL taken and not finished, scored by its lease's deadline;
 * 4. `…:owners` and 5. `…:items`, hashes: who holds each lease, and `ORIGIN ITEM` to queue again if it expires;
 * 6. `…:records`, a hash: each URL's one record, as JSON (or `1`, for a crawl that keeps its records elsewhere);
 * 7. `…:workers`, a hash: each process that took URLs, and when it last said it was alive;
 * 8. `…:politeness`, a hash, per origin: `a:ORIGIN` requests in flight (leases), `n:ORIGIN`
 *    the time its next request may start, `d:ORIGIN` its delay when `Crawl-delay` made it
 *    longer, `r:ORIGIN` its `robots.txt` rules as JSON, or `?URL` while the process holding
 *    URL's lease reads it, and `s:ORIGIN` when that reading started;
 * 9. `…:meta`, a hash: `queued` (URLs in the queues), `created` (the crawl's roots and
 *    options, as JSON), `maxPerHost` (0: no limit), `delayMs`, `robots` (`1` or `0`).
 *
 * and one list per origin, `…:q:ORIGIN`: its queue items as JSON, taken from the
 * left (the chapter's `Queue`, split by host). Those keys are named by the
 * script from `ARGV[1]`, the prefix `…:q:`; they share the hash tag, so a
 * Cluster keeps them in the same slot as the nine. ADD, PREPARE, FINISH and
 * TAKE also keep each call's reply for a lease under `…:reply:OWNER:N` (a
 * string that expires), so that a call sent again after its reply was lost
 * gets the same answer (`replayed` and `keep` below; TAKE's as JSON).
 *
 * The count asyncio's queue keeps in `_unfinished_tasks` is `queued` plus the
 * number of leases, both kept by these scripts only.
 *
 * In a Redis Cluster a crawl is spread over buckets (redis-frontier.ts's
 * `bucketsOf`): each bucket is this whole layout under its own hash tag,
 * `{NAME:bN}`, so its own slot, holding the origins whose hash falls in it
 * (and their URLs' `seen`, leases and records); each script runs on one
 * bucket's keys only, its `meta` holding a copy of the crawl's settings.
 * `ARGV[2]` names the command that publishes on the channel with it:
 * `PUBLISH NAME` in a single Redis, `SPUBLISH NAME` (sharded Pub/Sub, on
 * the bucket slot's node) in a Cluster.
 *
 * @module
 */

/** The score of an origin that may not start a request until something frees it (a slot, its `robots.txt`). */
const FULL = 9e15;

/** What every script starts with: the keys by name, Redis's clock, the crawl's politeness, and the steps on hosts. */
const COMMON = `
local SEEN, HOSTS, LEASES, OWNERS, ITEMS, RECORDS, WORKERS, POLITE, META = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
-- ARGV[2] is the publishing command and the channel: 'PUBLISH NAME' in one Redis, 'SPUBLISH NAME' (the bucket slot's shard) in a Cluster.
local QP, PUB, CHANNEL = ARGV[1], string.match(ARGV[2], '^(%u+) (.+)$')
local FULL = ${FULL}
local function now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local conf = redis.call('HMGET', META, 'maxPerHost', 'delayMs', 'robots')
local MAXPH, DELAY, ROBOTS = tonumber(conf[1]) or 0, tonumber(conf[2]) or 0, conf[3] == '1'
-- Scores the origin by when it may start a request; drops it when nothing is queued there. True if it may start one some time without waiting for a slot.
local function schedule(o)
  if redis.call('LLEN', QP .. o) == 0 then
    redis.call('ZREM', HOSTS, o)
    return false
  end
  local r = redis.call('HGET', POLITE, 'r:' .. o)
  if (r and string.sub(r, 1, 1) == '?') or (MAXPH > 0 and (tonumber(redis.call('HGET', POLITE, 'a:' .. o)) or 0) >= MAXPH) then
    redis.call('ZADD', HOSTS, FULL, o)
    return false
  end
  redis.call('ZADD', HOSTS, tonumber(redis.call('HGET', POLITE, 'n:' .. o)) or 0, o)
  return true
end
-- Queues an item at its origin's queue (at the front if asked), and schedules the origin if it was not.
local function enqueue(o, item, front)
  redis.call(front and 'LPUSH' or 'RPUSH', QP .. o, item)
  redis.call('HINCRBY', META, 'queued', 1)
  if not redis.call('ZSCORE', HOSTS, o) then schedule(o) end
end
-- Drops a URL's lease and frees its slot (and its robots.txt reading, if it was the reader's). Returns the item and origin.
local function unlease(url)
  local v = redis.call('HGET', ITEMS, url)
  redis.call('ZREM', LEASES, url)
  redis.call('HDEL', OWNERS, url)
  redis.call('HDEL', ITEMS, url)
  if not v then return nil, nil end
  local space = string.find(v, ' ', 1, true)
  local o = string.sub(v, 1, space - 1)
  if redis.call('HINCRBY', POLITE, 'a:' .. o, -1) <= 0 then redis.call('HDEL', POLITE, 'a:' .. o) end
  if redis.call('HGET', POLITE, 'r:' .. o) == '?' .. url then redis.call('HDEL', POLITE, 'r:' .. o, 's:' .. o) end
  return string.sub(v, space + 1), o
end
-- Whether an origin that was waiting for a slot or its robots.txt may now go: others should look again.
local function freed(o)
  local before = redis.call('ZSCORE', HOSTS, o)
  return schedule(o) and before and tonumber(before) >= FULL
end
local function queued() return tonumber(redis.call('HGET', META, 'queued')) or 0 end
-- Queues each URL of the (url, origin, item) triples from ARGV[first] to ARGV[last] (default: the end) that is not seen, marking it seen; returns how many.
local function queueFound(first, last)
  local added = 0
  for i = first, last or #ARGV, 3 do
    if redis.call('SADD', SEEN, ARGV[i]) == 1 then
      enqueue(ARGV[i + 1], ARGV[i + 2], false)
      added = added + 1
    end
  end
  return added
end
-- A call's reply kept under its id (ARGV), for PX ms: the same call sent again because its reply was lost (the frontier
-- retries after a broken connection) is answered as the first time, and not run again. An empty id keeps nothing.
local REPLIES = string.sub(META, 1, -5) .. 'reply:'
local function replayed(id)
  if id == '' then return false end
  local kept = redis.call('GET', REPLIES .. id)
  if not kept then return false end
  local reply = {}
  for n in string.gmatch(kept, '%-?%d+') do reply[#reply + 1] = tonumber(n) end
  return reply
end
local function keep(id, ms, reply)
  if id ~= '' then redis.call('SET', REPLIES .. id, table.concat(reply, ' '), 'PX', ms) end
  return reply
end
`;

/**
 * ADD: ARGV prefix, channel, call id, keep ms, then (url, origin, item) triples.
 * Queues each URL not seen, marking it seen in the same step. Returns how many
 * were new; the same call again (its id, within `keep ms`) returns that count
 * again (see `replayed` in COMMON).
 */
export const ADD = `${COMMON}
local again = replayed(ARGV[3])
if again then return again[1] end
local added = queueFound(5)
if added > 0 then redis.call(PUB, CHANNEL, 'queued') end
keep(ARGV[3], ARGV[4], {added})
return added
`;

/**
 * BEGIN: ARGV prefix, channel, created (the roots and options as JSON), maxPerHost, delayMs, robots, replacing.
 * The first process of a crawl stores what the crawl is; a later one gets back
 * what was stored, to compare. With `replacing` (not empty) equal to what is
 * stored, a process that overrides the politeness stores its own `created`,
 * `maxPerHost` and `delayMs` instead, for every process (each host waiting
 * for a slot is scheduled again under them, and the processes told to look). Returns the
 * stored JSON, and the URLs seen before this record was made (a crawl whose
 * keys were lost and found again in part), else 0.
 */
export const BEGIN = `${COMMON}
local stored = redis.call('HGET', META, 'created')
if stored and ARGV[7] ~= '' and stored == ARGV[7] then
  redis.call('HSET', META, 'created', ARGV[3], 'maxPerHost', ARGV[4], 'delayMs', ARGV[5])
  MAXPH, DELAY = tonumber(ARGV[4]) or 0, tonumber(ARGV[5]) or 0
  for _, o in ipairs(redis.call('ZRANGEBYSCORE', HOSTS, FULL, '+inf')) do schedule(o) end
  redis.call(PUB, CHANNEL, 'queued')
  return {ARGV[3], 0}
end
if stored then return {stored, 0} end
redis.call('HSET', META, 'created', ARGV[3], 'maxPerHost', ARGV[4], 'delayMs', ARGV[5], 'robots', ARGV[6])
return {ARGV[3], redis.call('SCARD', SEEN)}
`;

/**
 * TAKE: ARGV prefix, channel, owner, lease ms, count, jitter (a fraction of the delay, drawn by the caller), call id, keep ms.
 * First puts back at the front of their queues the URLs whose lease has expired
 * (their process died, or stopped renewing); then leases up to `count` URLs to
 * `owner`, from the origins whose next start has come and that have a free slot,
 * one URL per origin with a delay: each URL taken starts a request there now,
 * so the origin's next start moves on by its delay. The first URL of an origin
 * whose `robots.txt` no process has read makes its taker the reader: no other
 * URL goes there until the rules are stored (ROBOTS) or the reader's lease ends.
 * An item whose URL already has a record, or is leased, is dropped: a worker
 * whose lease expired finished it after all.
 * Returns the URLs queued and leased after the step, the ms until the next
 * origin may start (-1: none waits for time), then (item, origin, 1 if the taker
 * reads the origin's robots.txt else 0) for each URL taken. The same call
 * again (its id, within `keep ms`: sent again after its reply was lost)
 * returns the same reply and changes nothing, so the URLs the first one
 * leased are handed out, not left to wait out their lease (a reply is kept
 * only when it leased some: a TAKE that leased none is harmless twice). Its reply has
 * strings, so it is kept as JSON (cjson), not as COMMON's `keep` keeps numbers.
 */
export const TAKE = `${COMMON}
if ARGV[7] ~= '' then
  local kept = redis.call('GET', REPLIES .. ARGV[7])
  if kept then return cjson.decode(kept) end
end
local t = now()
local expired = redis.call('ZRANGEBYSCORE', LEASES, '-inf', t, 'LIMIT', 0, 1000)
for _, url in ipairs(expired) do
  local item, o = unlease(url)
  if item then enqueue(o, item, true) end
  if o then schedule(o) end
end
if #expired > 0 then redis.call(PUB, CHANNEL, 'queued') end
redis.call('HSET', WORKERS, ARGV[3], t)
local deadline = t + tonumber(ARGV[4])
local count = tonumber(ARGV[5])
local jitter = tonumber(ARGV[6])
local reply = {0, 0, -1}
local taken = 0
while taken < count do
  local ready = redis.call('ZRANGEBYSCORE', HOSTS, '-inf', t, 'LIMIT', 0, count - taken)
  if #ready == 0 then break end
  for _, o in ipairs(ready) do
    local more = true
    while more and taken < count do
      local item = redis.call('LPOP', QP .. o)
      if not item then break end
      redis.call('HINCRBY', META, 'queued', -1)
      local url = cjson.decode(item).url
      if redis.call('HEXISTS', RECORDS, url) == 0 and not redis.call('ZSCORE', LEASES, url) then
        redis.call('ZADD', LEASES, deadline, url)
        redis.call('HSET', OWNERS, url, ARGV[3])
        redis.call('HSET', ITEMS, url, o .. ' ' .. item)
        local active = redis.call('HINCRBY', POLITE, 'a:' .. o, 1)
        local reads = 0
        if ROBOTS and redis.call('HEXISTS', POLITE, 'r:' .. o) == 0 then
          redis.call('HSET', POLITE, 'r:' .. o, '?' .. url, 's:' .. o, t)
          reads = 1
        end
        local delay = tonumber(redis.call('HGET', POLITE, 'd:' .. o)) or DELAY
        if delay > 0 then redis.call('HSET', POLITE, 'n:' .. o, t + math.floor(delay * (1 + jitter))) end
        reply[#reply + 1] = item
        reply[#reply + 1] = o
        reply[#reply + 1] = reads
        taken = taken + 1
        more = delay == 0 and reads == 0 and (MAXPH == 0 or active < MAXPH)
      end
    end
    schedule(o)
  end
end
reply[1] = queued()
reply[2] = redis.call('ZCARD', LEASES)
local first = redis.call('ZRANGE', HOSTS, 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) < FULL then reply[3] = math.max(0, tonumber(first[2]) - t) end
-- Kept only when it leased URLs: a TAKE that leased none, run again, leaves nothing behind.
if ARGV[7] ~= '' and #reply > 3 then redis.call('SET', REPLIES .. ARGV[7], cjson.encode(reply), 'PX', ARGV[8]) end
return reply
`;

/**
 * FINISH: ARGV prefix, channel, owner, call id, keep ms, then for each page (several pages in
 * one call, in the order they finished): url, kind, record, URLs queued
 * already (by ADD or PREPARE, for a page with many links), k, then k (url,
 * origin, item) triples of the (other) URLs its visit found.
 * `kind` says what to store as the URL's record: `0`, only that it has one
 * (`1`, for a crawl that keeps its records elsewhere); `1`, `record` as it is
 * (a redirect's, whose `numNewUrls` stays 0); `2`, a page's: `record` is its
 * JSON cut just before the value of `numNewUrls`, its last field, which the
 * script writes (the URLs really queued, with those queued already) and
 * closes. No JSON is decoded or encoded here.
 * For each page, in one step: queues each found URL not seen; stores the
 * record unless the URL has one already; drops the lease, freeing its
 * origin's slot, if `owner` still holds it. Then publishes `done` when
 * nothing is queued or leased any more, `queued` when URLs were queued or an
 * origin waiting for a slot may go.
 * Returns, for each page, 1 if the record was stored, else 0, and the number
 * of URLs queued. The same call again (its id, within `keep ms`: sent again
 * after its reply was lost) returns the same reply and changes nothing: a
 * record this call stored is still this caller's, reported as stored.
 */
export const FINISH = `${COMMON}
local again = replayed(ARGV[4])
if again then return again end
local reply = {}
local wake = false
local i = 6
while i <= #ARGV do
  local url, kind, record, k = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 4])
  local added = queueFound(i + 5, i + 4 + 3 * k) + tonumber(ARGV[i + 3])
  local stored = 0
  if redis.call('HEXISTS', RECORDS, url) == 0 then
    if kind == '0' then record = '1' elseif kind == '2' then record = record .. added .. '}' end
    redis.call('HSET', RECORDS, url, record)
    stored = 1
  end
  if added > 0 then wake = true end
  if redis.call('HGET', OWNERS, url) == ARGV[3] then
    local _, o = unlease(url)
    if o and freed(o) then wake = true end
  end
  reply[#reply + 1] = stored
  reply[#reply + 1] = added
  i = i + 5 + 3 * k
end
if queued() == 0 and redis.call('ZCARD', LEASES) == 0 then
  redis.call(PUB, CHANNEL, 'done')
elseif wake then
  redis.call(PUB, CHANNEL, 'queued')
end
return keep(ARGV[4], ARGV[5], reply)
`;

/**
 * PREPARE: ARGV prefix, channel, owner, call id, keep ms, then for each page (several in one
 * call): url, k, then k (url, origin, item) triples of the URLs its visit found.
 * The first of a record's two steps when the process writes the record's line
 * to its own output first (the frontier's `journal`): queues each found URL not
 * seen, as ADD does, and says whether the record may still be stored here:
 * `owner` holds the URL's lease, and the URL has no record. FINISH, with no
 * URLs and this count as the URLs queued already, comes once the line is written.
 * Returns, for each page, the number queued, and 1 or 0; the same call again
 * (its id, within `keep ms`) returns the same reply and changes nothing.
 */
export const PREPARE = `${COMMON}
local again = replayed(ARGV[4])
if again then return again end
local reply = {}
local total = 0
local i = 6
while i <= #ARGV do
  local url, k = ARGV[i], tonumber(ARGV[i + 1])
  local added = queueFound(i + 2, i + 1 + 3 * k)
  local holds = redis.call('HGET', OWNERS, url) == ARGV[3] and redis.call('HEXISTS', RECORDS, url) == 0
  reply[#reply + 1] = added
  reply[#reply + 1] = holds and 1 or 0
  total = total + added
  i = i + 2 + 3 * k
end
if total > 0 then redis.call(PUB, CHANNEL, 'queued') end
return keep(ARGV[4], ARGV[5], reply)
`;

/**
 * STARTED: ARGV prefix, channel, then origins, one for each request that
 * started (several in one call).
 * A request to the origin really started (its fetch began, which may be a
 * while after TAKE leased its URL): the origin's next start moves to one
 * delay after now, if it was sooner, so the gaps the site sees between two
 * requests hold the delay, not only the gaps between leases. An origin
 * without a delay is left as it is. Returns, for each origin, its next start.
 */
export const STARTED = `${COMMON}
local t = now()
local reply = {}
for i = 3, #ARGV do
  local o = ARGV[i]
  local delay = tonumber(redis.call('HGET', POLITE, 'd:' .. o)) or DELAY
  local next = tonumber(redis.call('HGET', POLITE, 'n:' .. o)) or 0
  if delay > 0 and next < t + delay then
    next = t + delay
    redis.call('HSET', POLITE, 'n:' .. o, next)
    if redis.call('ZSCORE', HOSTS, o) then schedule(o) end
  end
  reply[#reply + 1] = next
end
return reply
`;

/**
 * RELEASE: ARGV prefix, channel, owner, then items as JSON.
 * Each item whose URL `owner` still holds goes back to the front of its origin's
 * queue, its lease dropped and its slot freed, for another process or a later
 * run. Returns how many went back.
 */
export const RELEASE = `${COMMON}
local released = 0
for i = 4, #ARGV do
  local url = cjson.decode(ARGV[i]).url
  if redis.call('HGET', OWNERS, url) == ARGV[3] then
    local _, o = unlease(url)
    if o then
      enqueue(o, ARGV[i], true)
      schedule(o)
    end
    released = released + 1
  end
end
if released > 0 then redis.call(PUB, CHANNEL, 'queued') end
return released
`;

/**
 * ROBOTS: ARGV prefix, channel, origin, rules JSON, delay ms (the origin's, with its `Crawl-delay`).
 * Stores an origin's `robots.txt` rules, read by one process, for every process;
 * keeps its longer delay; and, since the reader's own URL starts a delay after
 * the `robots.txt` request (`s:ORIGIN`, noted by TAKE) or now, whichever is
 * later, keeps that start for it: the origin's next start for others is one
 * delay after it. Returns 1.
 */
export const ROBOTS = `${COMMON}
local t = now()
local o = ARGV[3]
local delay = tonumber(ARGV[5])
local started = tonumber(redis.call('HGET', POLITE, 's:' .. o)) or t
redis.call('HSET', POLITE, 'r:' .. o, ARGV[4])
redis.call('HDEL', POLITE, 's:' .. o)
if delay > DELAY then redis.call('HSET', POLITE, 'd:' .. o, delay) end
if delay > 0 then
  local next = math.max(tonumber(redis.call('HGET', POLITE, 'n:' .. o)) or 0, math.max(t, started + delay) + delay)
  redis.call('HSET', POLITE, 'n:' .. o, next)
end
if freed(o) then redis.call(PUB, CHANNEL, 'queued') end
return 1
`;

/**
 * HOLD: ARGV prefix, channel, origin, ms, delay ms.
 * A `Retry-After` holds the origin back for `ms`: no process starts a request
 * there before then, and, since the held URL starts then in the process that
 * holds it, none before one delay after that. Returns 1.
 */
export const HOLD = `${COMMON}
local t = now()
local o = ARGV[3]
local until_ = t + tonumber(ARGV[4]) + tonumber(ARGV[5])
if until_ > (tonumber(redis.call('HGET', POLITE, 'n:' .. o)) or 0) then redis.call('HSET', POLITE, 'n:' .. o, until_) end
if redis.call('ZSCORE', HOSTS, o) then schedule(o) end
return 1
`;

/**
 * RENEW: ARGV prefix, channel, owner, lease ms, then URLs.
 * Moves the deadline of each lease `owner` still holds, and notes that it is alive.
 * Returns how many of the URLs it no longer holds (their leases expired).
 */
export const RENEW = `${COMMON}
local t = now()
redis.call('HSET', WORKERS, ARGV[3], t)
local deadline = t + tonumber(ARGV[4])
local lost = 0
for i = 5, #ARGV do
  if redis.call('HGET', OWNERS, ARGV[i]) == ARGV[3] then
    redis.call('ZADD', LEASES, 'XX', deadline, ARGV[i])
  else
    lost = lost + 1
  end
end
return lost
`;

/**
 * STATUS: ARGV prefix, channel.
 * One consistent reading: queued, leased, records, seen, Redis's clock, whether
 * the crawl was created (1 or 0), then for each process (owner, last seen alive,
 * leases held).
 */
export const STATUS = `${COMMON}
local held = {}
for _, owner in ipairs(redis.call('HVALS', OWNERS)) do held[owner] = (held[owner] or 0) + 1 end
local reply = {queued(), redis.call('ZCARD', LEASES), redis.call('HLEN', RECORDS), redis.call('SCARD', SEEN), now(), redis.call('HEXISTS', META, 'created')}
local workers = redis.call('HGETALL', WORKERS)
for i = 1, #workers, 2 do
  reply[#reply + 1] = workers[i]
  reply[#reply + 1] = tonumber(workers[i + 1])
  reply[#reply + 1] = held[workers[i]] or 0
end
return reply
`;

/** DONE: ARGV prefix, channel. Returns the URLs queued and leased. */
export const DONE = `${COMMON}
return {queued(), redis.call('ZCARD', LEASES)}
`;
