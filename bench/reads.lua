-- wrk script: each request reads the state of a random session of $SESSIONS ("ID TOKEN" lines);
-- $QUERY (such as "?predict=true") is appended to the path. With GZIP=1 each read says
-- Accept-Encoding: gzip, as browsers and URLSession send on their own (wrk sends none).
local sessions = {}
local query = os.getenv("QUERY") or ""
local gzip = os.getenv("GZIP") == "1"

function init(args)
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token = line:match("^(%S+)%s+(%S+)$")
    if id then sessions[#sessions + 1] = { id = id, token = token } end
  end
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end

function request()
  local s = sessions[math.random(#sessions)]
  local headers = { ["Authorization"] = "Bearer " .. s.token }
  if gzip then headers["Accept-Encoding"] = "gzip" end
  return wrk.format("GET", "/v1/sessions/" .. s.id .. query, headers)
end
