-- wrk script: each request posts home.selectTab to a random session of bench/sessions.txt
-- (lines "ID TOKEN"), alternating tabs, with no If-Match so every post applies. With KEYED=1
-- each post carries a fresh Idempotency-Key (its key is stored, not its answer). With GZIP=1 each
-- post says Accept-Encoding: gzip, as browsers and URLSession send on their own (wrk sends none),
-- so answers at or above the server's --gzip-min-bytes are compressed.
--
-- The requests are made once, in init (a key, when KEYED=1, goes between two halves made once),
-- and the script reads no answer (no `response` function: wrk counts non-2xx answers itself).
-- Formatting each request and handing every answer to Lua cost wrk 6 to 7 µs of CPU per action, on
-- the two cores the server under test has too (BENCHMARKS.md, "Issue 35, seventeenth session").
local sessions = 0
local counter = 0
local keyed = os.getenv("KEYED") == "1"
-- Keys in random order, as the clients' UUIDv4 keys come; KEYS=ordered makes them sort by time
-- (within each wrk thread), as UUIDv7 keys would.
local ordered = os.getenv("KEYS") == "ordered"
local gzip = os.getenv("GZIP") == "1"
-- requests[i][tab]: the whole request, or with KEYED=1 the halves before and after the key
local requests = {}
local run = ""

function init(args)
  local thread = tostring({}):match("0x(%x+)") or "0"
  math.randomseed(os.time() + (tonumber(thread, 16) or 0))
  -- Unique per run and per wrk thread (each has its own Lua state and counter).
  run = string.format("%x-%s-%x", os.time(), thread, math.random(1, 0x3fffffff))
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token = line:match("^(%S+)%s+(%S+)$")
    if id then
      sessions = sessions + 1
      local byTab = {}
      for tab = 0, 1 do
        local body = '{"type":"home.selectTab","params":{"index":' .. tab .. '}}'
        local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
        if gzip then headers["Accept-Encoding"] = "gzip" end
        if keyed then headers["Idempotency-Key"] = "\0KEY\0" end
        local request = wrk.format("POST", "/v1/sessions/" .. id .. "/actions", headers, body)
        if keyed then
          local at = request:find("\0KEY\0", 1, true)
          byTab[tab] = { request:sub(1, at - 1), request:sub(at + 5) }
        else
          byTab[tab] = request
        end
      end
      requests[sessions] = byTab
    end
  end
end

function request()
  counter = counter + 1
  local made = requests[math.random(sessions)][counter % 2]
  if not keyed then return made end
  if ordered then return made[1] .. run .. string.format("-%010d", counter) .. made[2] end
  return made[1] .. run .. string.format("-%08x%07x-%d", math.random(0, 0x7fffffff), math.random(0, 0xfffffff), counter) .. made[2]
end

-- PACE_MS paces the run: each connection waits that long before each request, so wrk offers a
-- fixed rate (connections x 1000 / PACE_MS per second) instead of as many as the server takes,
-- and the latencies are those of a server that keeps up, not of a queue.
local pace = tonumber(os.getenv("PACE_MS") or "")
if pace then
  function delay() return pace end
end
