-- wrk script: each request posts home.selectTab to a random session of bench/sessions.txt
-- (lines "ID TOKEN"), alternating tabs, with no If-Match so every post applies. With KEYED=1
-- each post carries a fresh Idempotency-Key (its key is stored, not its answer). With GZIP=1 each
-- post says Accept-Encoding: gzip, as browsers and URLSession send on their own (wrk sends none),
-- so answers at or above the server's --gzip-min-bytes are compressed.
local sessions = {}
local counter = 0

function init(args)
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token = line:match("^(%S+)%s+(%S+)$")
    if id then sessions[#sessions + 1] = { id = id, token = token } end
  end
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end

local keyed = os.getenv("KEYED") == "1"
local gzip = os.getenv("GZIP") == "1"
local run = string.format("%x%x", os.time(), math.random(1, 0x3fffffff))

function request()
  counter = counter + 1
  local s = sessions[math.random(#sessions)]
  local body = '{"type":"home.selectTab","params":{"index":' .. (counter % 2) .. '}}'
  local headers = { ["Authorization"] = "Bearer " .. s.token, ["Content-Type"] = "application/json" }
  if gzip then headers["Accept-Encoding"] = "gzip" end
  if keyed then headers["Idempotency-Key"] = run .. "-" .. tostring({}):match("0x(%x+)") .. "-" .. counter end
  return wrk.format("POST", "/v1/sessions/" .. s.id .. "/actions", headers, body)
end

-- PACE_MS paces the run: each connection waits that long before each request, so wrk offers a
-- fixed rate (connections x 1000 / PACE_MS per second) instead of as many as the server takes,
-- and the latencies are those of a server that keeps up, not of a queue.
local pace = tonumber(os.getenv("PACE_MS") or "")
if pace then
  function delay() return pace end
end

local non200 = 0
function response(status, headers, body)
  if status ~= 200 then non200 = non200 + 1 end
end
