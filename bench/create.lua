-- wrk script: each request creates a session for a new user.
local counter = 0
local prefix = ""

function init(args)
  prefix = tostring(math.random(1, 1000000000))
end

function request()
  counter = counter + 1
  local body = '{"userId":"load-' .. prefix .. '-' .. counter .. '","attributes":{"country":"US"}}'
  return wrk.format("POST", "/v1/sessions", { ["Content-Type"] = "application/json" }, body)
end
