-- wrk script: each request creates a session for a new user; with a client key given after
-- wrk's `--` (`wrk … -s bench/create.lua URL -- fsk_…`), it is sent as X-API-Key.
local counter = 0
local prefix = ""
local headers = { ["Content-Type"] = "application/json" }

function init(args)
  if args[1] and args[1] ~= "" then headers["X-API-Key"] = args[1] end
  -- Unique per run and per wrk thread (each thread has its own Lua state, whose first
  -- math.random is the same in every run): each request's user is new, also in a later run on
  -- the same database.
  prefix = os.time() .. "-" .. (tostring({}):match("0x(%x+)") or math.random(1, 1000000000))
end

function request()
  counter = counter + 1
  local body = '{"userId":"load-' .. prefix .. '-' .. counter .. '","attributes":{"country":"US"}}'
  return wrk.format("POST", "/v1/sessions", headers, body)
end
