-- wrk script: walks sessions of $SESSIONS ("ID TOKEN" lines, sessions on onboarding.first) between
-- onboarding.first and onboarding.second: each session's posts alternate onboarding.showSecond and
-- onboarding.returnToFirst, so every post applies. Each wrk thread takes its own share of the
-- sessions in turn, so a session's next post goes out long after its last one was answered.
-- $QUERY (such as "?predict=true") is appended to every action's path. wrk calls request() once
-- before the run without sending it, so one session's turn is skipped and its next post is
-- refused once (422), then in step again: a run shows "non-2xx 1".
local threads = {}

function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end

local sessions = {}
local steps = {}
local next_session = 1
local query = os.getenv("QUERY") or ""

function init(args)
  local all = {}
  for line in io.lines(os.getenv("SESSIONS") or "bench/sessions.txt") do
    local id, token = line:match("^(%S+)%s+(%S+)$")
    if id then all[#all + 1] = { id = id, token = token } end
  end
  local count = tonumber(os.getenv("THREADS") or "2")
  for i = 1, #all do
    if (i - 1) % count == index then sessions[#sessions + 1] = all[i] end
  end
  for i = 1, #sessions do steps[i] = 0 end
end

function request()
  local i = next_session
  next_session = next_session % #sessions + 1
  local s = sessions[i]
  local type = steps[i] % 2 == 0 and "onboarding.showSecond" or "onboarding.returnToFirst"
  steps[i] = steps[i] + 1
  return wrk.format("POST", "/v1/sessions/" .. s.id .. "/actions" .. query,
    { ["Authorization"] = "Bearer " .. s.token, ["Content-Type"] = "application/json" }, '{"type":"' .. type .. '"}')
end
