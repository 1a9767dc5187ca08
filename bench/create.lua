-- wrk script: each request creates a session for a new user (with the client key in KEY, when
-- set, as X-API-Key).
local counter = 0
local prefix = ""
local headers = { ["Content-Type"] = "application/json" }
local key = os.getenv("KEY")
if key and key ~= "" then headers["X-API-Key"] = key end

function init(args)
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
