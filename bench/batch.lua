-- wrk script (run with THREADS set to wrk's -t): each request posts a batch of BATCH (default
-- 20) offline taps, home.selectTab alternating tabs, to a session of $SESSIONS (lines "ID TOKEN
-- VERSION") that has no batch in flight, each tap with a fresh key and the version it would be
-- applied on. Sessions are split between wrk's threads, so no two batches race on one session:
-- every tap applies, and a batch answer whose "applied" is not BATCH counts as partial. Each
-- answer's state says the session's version for its next batch (a session whose VERSION is
-- wrong or missing has its first batch refused with 412, and learns it from that answer).
local threads = {}

function setup(thread)
  thread:set("index", #threads)
  threads[#threads + 1] = thread
end

local sessions = {}
local busy = {}
local byId = {}
local cursor = 0
local counter = 0
local size = tonumber(os.getenv("BATCH") or "20")
local run = ""
batches, partial, failed, stalled = 0, 0, 0, 0

function init(args)
  local all = {}
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token, version = line:match("^(%S+)%s+(%S+)%s*(%d*)$")
    if id then all[#all + 1] = { id = id, token = token, version = tonumber(version) or 2 } end
  end
  -- wrk calls setup and init thread by thread, so the number of threads comes from outside.
  local count = tonumber(os.getenv("THREADS") or "2")
  for position, session in ipairs(all) do
    if (position - 1) % count == index then
      sessions[#sessions + 1] = session
      byId[session.id] = session
    end
  end
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
  -- Keys of earlier runs on the same sessions must not come back with other taps.
  run = string.format("%x%x-%d", os.time(), math.random(1, 0x3fffffff), index)
end

function request()
  local session
  for _ = 1, #sessions do
    cursor = cursor % #sessions + 1
    if not busy[cursor] then
      session = sessions[cursor]
      busy[cursor] = true
      session.slot = cursor
      break
    end
  end
  if session == nil then
    -- Every session of this thread has a batch in flight (more connections than sessions).
    stalled = stalled + 1
    return wrk.format("GET", "/healthz")
  end
  local items = {}
  for offset = 0, size - 1 do
    counter = counter + 1
    local version = session.version + offset
    items[#items + 1] = '{"key":"' .. run .. "-" .. counter .. '","version":' .. version
      .. ',"at":"2026-11-25T10:00:00.123Z","action":{"type":"home.selectTab","params":{"index":' .. ((version + 1) % 2) .. '}}}'
  end
  return wrk.format("POST", "/v1/sessions/" .. session.id .. "/actions/batch",
    { ["Authorization"] = "Bearer " .. session.token, ["Content-Type"] = "application/json" },
    '{"actions":[' .. table.concat(items, ",") .. ']}')
end

function response(status, headers, body)
  local id, version = body:match('"state":{"sessionId":"([^"]+)","userId":"[^"]*","version":(%d+)')
  local session = id and byId[id]
  if session == nil then
    -- The /healthz of a stall, or an answer without a state (which leaves its session busy).
    if not body:match('"status":"ok"') then failed = failed + 1 end
    return
  end
  session.version = tonumber(version)
  busy[session.slot] = nil
  if status ~= 200 then
    failed = failed + 1
    return
  end
  batches = batches + 1
  if not body:match('^{"applied":' .. size .. ',') then partial = partial + 1 end
end

function done(summary, latency, requests)
  local totals = { batches = 0, partial = 0, failed = 0, stalled = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do totals[name] = totals[name] + (tonumber(thread:get(name)) or 0) end
  end
  io.write(string.format("batch: %d answered 200 (%d partial), %d failed, %d stalled; %d taps per batch\n",
    totals.batches, totals.partial, totals.failed, totals.stalled, size))
end
