-- wrk script: OFREP evaluations of one flag (the sample app's eu-face-scan), as a feature-flag
-- client polls them; KEY is a client key (POST /v1/client-keys with the admin token).
-- Usage: KEY=fsk_... wrk -t2 -c16 -d8s -s bench/ofrep.lua http://127.0.0.1:8080
local key = os.getenv("KEY") or error("set KEY to a client key")
wrk.method = "POST"
wrk.body = '{"context":{"targetingKey":"u1","country":"FR"}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. key
wrk.path = "/ofrep/v1/evaluate/flags/eu-face-scan"
