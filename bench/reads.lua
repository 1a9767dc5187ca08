-- wrk script: each request reads the state of a random session of $SESSIONS ("ID TOKEN" lines);
-- $QUERY (such as "?predict=true") is appended to the path. With GZIP=1 each read says
-- Accept-Encoding: gzip, as browsers and URLSession send on their own (wrk sends none).
-- Each session's request is made once, in init, as in bench/actions.lua.
local requests = {}

function init(args)
  local query = os.getenv("QUERY") or ""
  local gzip = os.getenv("GZIP") == "1"
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token = line:match("^(%S+)%s+(%S+)$")
    if id then
      local headers = { ["Authorization"] = "Bearer " .. token }
      if gzip then headers["Accept-Encoding"] = "gzip" end
      requests[#requests + 1] = wrk.format("GET", "/v1/sessions/" .. id .. query, headers)
    end
  end
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end

function request()
  return requests[math.random(#requests)]
end
