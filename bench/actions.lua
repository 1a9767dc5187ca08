-- wrk script: each request posts home.selectTab to a random session of bench/sessions.txt
-- (lines "ID TOKEN"), alternating tabs, with no If-Match so every post applies.
local sessions = {}
local counter = 0

function init(args)
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token = line:match("^(%S+)%s+(%S+)$")
    if id then sessions[#sessions + 1] = { id = id, token = token } end
  end
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end

function request()
  counter = counter + 1
  local s = sessions[math.random(#sessions)]
  local body = '{"type":"home.selectTab","params":{"index":' .. (counter % 2) .. '}}'
  return wrk.format("POST", "/v1/sessions/" .. s.id .. "/actions",
    { ["Authorization"] = "Bearer " .. s.token, ["Content-Type"] = "application/json" }, body)
end

local non200 = 0
function response(status, headers, body)
  if status ~= 200 then non200 = non200 + 1 end
end
