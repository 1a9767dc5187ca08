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
-- Keys that sort by time within each wrk thread, as the clients' UUIDv7 keys do (with -t2, two
-- places where keys are added, where many clients' keys have one); KEYS=random puts them in
-- random order, as UUIDv4 keys (the clients' before migration 21, and other clients') come.
local ordered = os.getenv("KEYS") ~= "random"
local gzip = os.getenv("GZIP") == "1"
-- requests[i][tab]: the whole request, or with KEYED=1 the halves before and after the key
local requests = {}
local run = ""
local started = ""

-- A seed from the kernel where there is one, so that two wrk processes started in the same
-- second do not make the same keys.
local function seed(thread)
  local urandom = io.open("/dev/urandom", "rb")
  local bytes = urandom and urandom:read(4)
  if urandom then urandom:close() end
  local value = tonumber(thread, 16) or 0
  if bytes and #bytes == 4 then
    value = value + bytes:byte(1) * 16777216 + bytes:byte(2) * 65536 + bytes:byte(3) * 256 + bytes:byte(4)
  end
  math.randomseed(os.time() + value)
end

function init(args)
  local thread = tostring({}):match("0x(%x+)") or "0"
  seed(thread)
  -- Keys are shaped as UUIDs (36 characters, as the clients' are, so the key index holds
  -- entries of their size): eight digits, then `run`, a part per run and wrk thread (each has
  -- its own Lua state and counter), then the thread's counter.
  run = string.format("%04x-%04x-%04x", math.random(0, 0xffff), math.random(0, 0xffff), math.random(0, 0xffff))
  started = string.format("%08x", os.time())
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token = line:match("^(%S+)%s+(%S+)$")
    if id then
      sessions = sessions + 1
      local byTab = {}
      for tab = 0, 1 do
        local body = '{"type":"home.selectTab","params":{"index":' .. tab .. '}}'
        local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
        if gzip then headers["Accept-Encoding"] = "gzip" end
        if keyed then headers["Idempotency-Key"] = "@@KEY@@" end
        local request = wrk.format("POST", "/v1/sessions/" .. id .. "/actions", headers, body)
        if keyed then
          local at = assert(request:find("@@KEY@@", 1, true), "the key's place was not found in the request")
          byTab[tab] = { request:sub(1, at - 1), request:sub(at + 7) }
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
  -- Ordered: the run's start, then the counter, so a thread's keys sort by time. Random: eight
  -- random digits first, so keys of every run and thread mix in the index as UUIDv4 keys do;
  -- the run and the counter after them keep each key unique.
  local first = ordered and started or string.format("%04x%04x", math.random(0, 0xffff), math.random(0, 0xffff))
  return made[1] .. first .. "-" .. run .. string.format("-%012x", counter) .. made[2]
end

-- PACE_MS paces the run: each connection waits that long before each request, so wrk offers a
-- fixed rate (connections x 1000 / PACE_MS per second) instead of as many as the server takes,
-- and the latencies are those of a server that keeps up, not of a queue.
local pace = tonumber(os.getenv("PACE_MS") or "")
if pace then
  function delay() return pace end
end
