-- wrk script for bench/soak.sh: steady churn of sessions. One request in CREATE_EVERY (default
-- 20) creates a session for one of the onboarded users soak-0..soak-(USERS-1); the others post
-- home.selectTab to one of the RING (default 16) sessions this thread created last. Sessions
-- pushed out of the ring get no more actions: they go idle, expire, and retention removes them.
-- With KEYED=1 each action carries an Idempotency-Key that sorts by time (to the second, then by
-- wrk thread and count), as the clients' UUIDv7 keys do, so retention prunes stored keys and
-- deletes expired sessions' keys too; KEYS=random puts random digits first, as UUIDv4 keys come.
local ring, size, next_slot, counter = {}, tonumber(os.getenv("RING") or "16"), 1, 0
local every = tonumber(os.getenv("CREATE_EVERY") or "20")
local users = tonumber(os.getenv("USERS") or "50")
local keyed = os.getenv("KEYED") == "1"
local random_keys = os.getenv("KEYS") == "random"
local thread_id

function init(args)
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
  thread_id = string.format("%08x", math.random(0, 0x7fffffff))
end

function request()
  counter = counter + 1
  if #ring == 0 or counter % every == 0 then
    local body = '{"userId":"soak-' .. math.random(0, users - 1) .. '"}'
    return wrk.format("POST", "/v1/sessions", { ["Content-Type"] = "application/json" }, body)
  end
  local s = ring[math.random(#ring)]
  local body = '{"type":"home.selectTab","params":{"index":' .. (counter % 2) .. '}}'
  local headers = { ["Authorization"] = "Bearer " .. s.token, ["Content-Type"] = "application/json" }
  if keyed then
    local first = random_keys and string.format("%08x", math.random(0, 0x7fffffff)) or string.format("%010x", os.time())
    headers["Idempotency-Key"] = string.format("%s-%s-%012x", first, thread_id, counter)
  end
  return wrk.format("POST", "/v1/sessions/" .. s.id .. "/actions", headers, body)
end

function response(status, headers, body)
  if status == 201 then
    local id, token = body:match('"session":{"id":"([^"]+)","token":"([^"]+)"')
    if id then
      ring[next_slot] = { id = id, token = token }
      next_slot = next_slot % size + 1
    end
  end
end
