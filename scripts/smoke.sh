#!/usr/bin/env bash
# End-to-end checks of the built `flowstack` binary as a user runs it: serve, curl, SIGTERM,
# migrate, and configuration errors. Prints "smoke: N passed, M failed"; exits 1 on a failure.
# FLOWSTACK_TEST_DB_KIND=postgresql runs them on a throwaway PostgreSQL (scripts/pgserver.py,
# removed after): the same checks, but backup (which copies SQLite files) is checked to point at
# pg_dump, and a password given in the URL is checked never to be printed.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
bin=${FLOWSTACK_BIN:-"$(swift build --show-bin-path)/flowstack"}  # FLOWSTACK_BIN: a binary built elsewhere
[ -x "$bin" ] || swift build --product flowstack >/dev/null
work=$(mktemp -d)
server_pid=""
kind=${FLOWSTACK_TEST_DB_KIND:-sqlite}
pg_dir=""
cleanup() {
    [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
    [ -n "$pg_dir" ] && python3 scripts/pgserver.py stop --dir "$pg_dir" >&2
    rm -rf "$work"
}
trap cleanup EXIT
case $kind in
    sqlite) db="$work/db.sqlite" ;;
    postgresql)
        # a fresh PostgreSQL of its own (in a temporary folder the postgres user can reach): DIR, URL, PORT, BINDIR
        pg_env=$(python3 scripts/pgserver.py start) || { echo "smoke: PostgreSQL did not start" >&2; exit 1; }
        eval "$pg_env"
        pg_dir=$DIR db=$URL
        bounded=(timeout 60)  # a serve that should refuse to start, but waits for the database instead, must not hang the run
        psql() { "$BINDIR/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$@"; } ;;
    *) echo "smoke: FLOWSTACK_TEST_DB_KIND=$kind: expected sqlite or postgresql" >&2; exit 2 ;;
esac
passed=0 failed=0
check() { # check NAME COMMAND...: counts the result of COMMAND
    local name=$1; shift
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "smoke: FAILED $name" >&2; fi
}

# serve on a free port, read the port from its first lines
FLOWSTACK_ADMIN_TOKEN= "$bin" serve --port 0 --db "$db" >"$work/out.log" 2>"$work/err.log" &
server_pid=$!
port=$(listening_port "$work/out.log")
check "server prints where it listens" test -n "$port"
check "server prints a generated admin token" grep -q "^admin token .*: [0-9a-f]\{64\}$" "$work/out.log"
base="http://127.0.0.1:$port"
check "/healthz answers ok" sh -c "curl -fsS $base/healthz | grep -q '\"status\":\"ok\"'"
check "unknown route is a 404 problem" sh -c "curl -s -o /dev/null -w '%{http_code} %{content_type}' $base/nope | grep -q '^404 application/problem+json'"
check "/openapi.yaml is served" sh -c "curl -fsS $base/openapi.yaml 2>/dev/null | grep -q '^openapi: 3'"
check "/metrics is Prometheus text" sh -c "curl -fsS $base/metrics 2>/dev/null | grep -q '^# TYPE flowstack_http_requests_total counter'"
# the curl sessions of the README and docs/, run as written (port substituted) and compared with
# their "# →" lines (every block between readme-session markers, in the pages' order, as one
# script: scripts/readme.py --session; ADMIN is the printed token)
python3 scripts/readme.py --session >"$work/session.sh"
sed -n 's/^# → //p' "$work/session.sh" >"$work/session.expected"
sed -i "s#localhost:8080#127.0.0.1:$port#g" "$work/session.sh"
ADMIN=$(sed -n 's/^admin token .*: \([0-9a-f]*\)$/\1/p' "$work/out.log") bash "$work/session.sh" >"$work/session.out" 2>&1
check "the curl sessions of the README and docs print what they say" diff -u "$work/session.expected" "$work/session.out"

# an acknowledged action survives kill -9
created=$(curl -s "$base/v1/sessions" -d '{"userId":"durable"}')
sid=$(printf '%s' "$created" | sed -E 's/^\{"session":\{"id":"([^"]+)","token":"([^"]+)".*/\1/')
tok=$(printf '%s' "$created" | sed -E 's/^\{"session":\{"id":"([^"]+)","token":"([^"]+)".*/\2/')
curl -s "$base/v1/sessions/$sid/actions" -H "Authorization: Bearer $tok" -d '{"type":"onboarding.showSecond"}' >/dev/null
curl -s "$base/v1/sessions/$sid/actions" -H "Authorization: Bearer $tok" -d '{"type":"onboarding.completed"}' >/dev/null
kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null
FLOWSTACK_ADMIN_TOKEN= "$bin" serve --port "$port" --db "$db" >"$work/out2.log" 2>"$work/err.log" &
server_pid=$!
for _ in $(seq 100); do curl -fs "$base/healthz" >/dev/null 2>&1 && grep -q "listening" "$work/out2.log" && break; sleep 0.1; done
after=$(curl -s "$base/v1/sessions/$sid" -H "Authorization: Bearer $tok")
check "state survives kill -9 (version 2, at home)" sh -c "printf '%s' '$after' | grep -q '\"version\":2,.*\"top\":{\"id\":\"[a-z0-9]*\",\"feature\":\"home.first\"'"

# the admin token made at the first start is kept (hashed) in the database: a restart prints no
# new one and takes the first; admin-token --reset replaces it while the server runs
admin=$(sed -n 's/^admin token .*: \([0-9a-f]*\)$/\1/p' "$work/out.log")
status_of() { curl -s -o /dev/null -w '%{http_code}' "${2:-$base}/v1/flows" -H "Authorization: Bearer $1"; }
check "a restart prints no new admin token" sh -c "grep -q '^admin token: the one printed' '$work/out2.log' && ! grep -q '[0-9a-f]\{64\}' '$work/out2.log'"
check "a restart keeps the admin token" test "$(status_of "$admin")" = 200
"$bin" admin-token --reset --db "$db" >"$work/reset.log" 2>&1
new_admin=$(sed -n 's/^admin token .*: \([0-9a-f]\{64\}\)$/\1/p' "$work/reset.log")
check "admin-token --reset prints a new token" sh -c "test -n '$new_admin' && test '$new_admin' != '$admin'"
check "the new token opens the running server" test "$(status_of "$new_admin")" = 200
check "the old token is refused at once" test "$(status_of "$admin")" = 401
"$bin" admin-token --db "$db" >"$work/noreset.log" 2>&1; status=$?
check "admin-token without --reset exits 2 and says why" sh -c "test $status -eq 2 && grep -q 'cannot be shown' '$work/noreset.log'"

# flows replay: the command asks the running server for a replay and prints its table; the durable
# session (onboarding walked, the newest) diverges at onboarding.first on a draft that starts at
# its second screen
draft=$(curl -s -X PUT "$base/v1/flows/onboarding" -H "Authorization: Bearer $new_admin" \
    -d '{"name":"onboarding","kind":"stacked","initial":["onboarding.second"],"on":{"onboarding.completed":[{"from":"onboarding.second","do":[{"bubble":{}}]}]}}' \
    | sed -n 's/.*"version":\([0-9]*\).*/\1/p')
FLOWSTACK_ADMIN_TOKEN=$new_admin "$bin" flows replay --server "$base" --flows "onboarding=$draft" --sample 1 >"$work/replay.log" 2>&1; status=$?
check "flows replay prints where sessions diverge" sh -c "test $status -eq 0 && grep -q 'onboarding: diverges at onboarding.first → onboarding.second: 1' '$work/replay.log'"
FLOWSTACK_ADMIN_TOKEN=$new_admin "$bin" flows replay --server "$base" --flows onboarding=999 >"$work/replay-bad.log" 2>&1; status=$?
check "flows replay of a version not stored exits 3 with the server's reason" sh -c "test $status -eq 3 && grep -q 'no version 999' '$work/replay-bad.log'"
# the server that made the token at its first start takes a reset too (it reads the kept hash)
FLOWSTACK_ADMIN_TOKEN= "$bin" serve --port 0 --db "$work/fresh.sqlite" >"$work/fresh.log" 2>&1 &
fresh_pid=$!
fresh_base="http://127.0.0.1:$(listening_port "$work/fresh.log")"
made=$(sed -n 's/^admin token .*: \([0-9a-f]\{64\}\)$/\1/p' "$work/fresh.log")
"$bin" admin-token --reset --db "$work/fresh.sqlite" >"$work/fresh-reset.log" 2>&1
fresh=$(sed -n 's/^admin token .*: \([0-9a-f]\{64\}\)$/\1/p' "$work/fresh-reset.log")
check "a reset reaches the server that made the token (new 200, made 401)" \
    test "$(status_of "$fresh" "$fresh_base") $(status_of "$made" "$fresh_base")" = "200 401"
kill -TERM "$fresh_pid"; wait "$fresh_pid"

if [ "$kind" = sqlite ]; then
# an online backup while serving, and a restore from it
"$bin" backup --db "$work/db.sqlite" --to "$work/backup.sqlite" >"$work/backup.log" 2>&1
check "backup while serving succeeds" grep -q "integrity ok" "$work/backup.log"
"$bin" backup --db "$work/db.sqlite" --to "$work/backup.sqlite" >/dev/null 2>&1; status=$?
check "backup refuses to overwrite (status 3)" test "$status" -eq 3
"$bin" serve --port 0 --db "$work/backup.sqlite" >"$work/restored.log" 2>&1 &
restored_pid=$!
restored_port=$(listening_port "$work/restored.log")
restored=$(curl -s "http://127.0.0.1:$restored_port/v1/sessions/$sid" -H "Authorization: Bearer $tok")
kill -TERM "$restored_pid"; wait "$restored_pid"
check "a server started on the backup has the session" sh -c "printf '%s' '$restored' | grep -q '\"version\":2,'"
else
# backup copies SQLite files: on PostgreSQL it says to use pg_dump, exits 2, writes nothing
"$bin" backup --db "$db" --to "$work/backup.sqlite" >"$work/backup.log" 2>&1; status=$?
check "backup on a PostgreSQL URL exits 2" test "$status" -eq 2
check "backup on a PostgreSQL URL says to use pg_dump" grep -q "pg_dump" "$work/backup.log"
check "backup on a PostgreSQL URL writes no file" test ! -e "$work/backup.sqlite"
fi

kill -TERM "$server_pid"
wait "$server_pid"; status=$?
server_pid=""
check "SIGTERM stops the server with status 0" test "$status" -eq 0
check "the server says it stopped" grep -q "stopped" "$work/err.log"

# migrate: up to date, then a database from a newer binary is refused
check "migrate reports an up-to-date schema" sh -c "'$bin' migrate --db '$db' | grep -q 'up to date'"
if [ "$kind" = sqlite ]; then
    python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO schema_migrations VALUES (999,'future','now')\"); c.commit()" "$work/db.sqlite"
else
    psql "$db" -c "INSERT INTO schema_migrations VALUES (999,'future','now')"
    tables_before=$(psql "$db" -c "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'")
fi
"$bin" migrate --db "$db" >"$work/migrate.log" 2>&1; status=$?
check "migrate refuses a newer schema with status 3" test "$status" -eq 3
check "the refusal says what to do" grep -q "schema version 999" "$work/migrate.log"
${bounded[@]+"${bounded[@]}"} "$bin" serve --port 0 --db "$db" >"$work/serve2.log" 2>&1; status=$?
check "serve refuses a newer schema too (status 3)" test "$status" -eq 3
if [ "$kind" = postgresql ]; then
    untouched() {
        [ -n "$tables_before" ] &&
        [ "$(psql "$db" -c "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'")" = "$tables_before" ] &&
        [ "$(psql "$db" -c "SELECT max(version) FROM schema_migrations")" = 999 ]
    }
    check "a refused newer schema is left untouched" untouched
fi

if [ "$kind" = postgresql ]; then
    # A password given in the URL is never printed: serve (at debug level, and through requests,
    # an error, SIGTERM), migrate, and a refused login, with it in the user part or as a parameter.
    secret="s3cret-$RANDOM$RANDOM"
    role_env=$(python3 scripts/pgserver.py add-role --dir "$pg_dir" --role flowsecret --password "$secret")
    pw_url=${role_env#URL=}
    wrong_url="postgresql://flowsecret:${secret}-wrong@127.0.0.1:$PORT/flowsecret"
    needs_password() { psql "$pw_url" -c "SELECT 1" >/dev/null && ! psql "$wrong_url" -c "SELECT 1" >/dev/null 2>&1; }
    check "a role that must give its password (scram for it alone)" needs_password
    FLOWSTACK_ADMIN_TOKEN= "$bin" serve --port 0 --db "$pw_url" --log-level debug >"$work/pw-out.log" 2>"$work/pw-err.log" &
    server_pid=$!
    pw_port=$(listening_port "$work/pw-out.log")
    check "serve starts on a URL with a password" test -n "$pw_port"
    if [ -n "$pw_port" ]; then
        pw_base="http://127.0.0.1:$pw_port"
        created=$(curl -s "$pw_base/v1/sessions" -d '{"userId":"pw-user"}')
        sid=$(printf '%s' "$created" | sed -E 's/^\{"session":\{"id":"([^"]+)","token":"([^"]+)".*/\1/')
        tok=$(printf '%s' "$created" | sed -E 's/^\{"session":\{"id":"([^"]+)","token":"([^"]+)".*/\2/')
        check "the password's role serves a session" sh -c "curl -s '$pw_base/v1/sessions/$sid/actions' -H 'Authorization: Bearer $tok' -d '{\"type\":\"onboarding.showSecond\"}' | grep -q '\"version\":1,'"
        curl -s "$pw_base/healthz" "$pw_base/metrics" "$pw_base/v1/sessions/nope" >"$work/pw-answers.log" 2>&1
        curl -s "$pw_base/v1/sessions" -d '{' >>"$work/pw-answers.log" 2>&1
        kill -TERM "$server_pid"; wait "$server_pid"; status=$?
        server_pid=""
        check "serve on a URL with a password stops with status 0" test "$status" -eq 0
        check "serve never prints the password (stdout, stderr, answers)" sh -c "! grep -F -q '$secret' '$work/pw-out.log' '$work/pw-err.log' '$work/pw-answers.log'"
    fi
    "$bin" migrate --db "$pw_url" >"$work/pw-migrate.log" 2>&1; status=$?
    check "migrate on a URL with a password succeeds" test "$status" -eq 0
    param_url="postgresql://flowsecret@127.0.0.1:$PORT/flowsecret?password=$secret"
    "$bin" migrate --db "$param_url" >>"$work/pw-migrate.log" 2>&1; status=$?
    check "migrate on a URL with ?password= succeeds" test "$status" -eq 0
    "$bin" backup --db "$pw_url" --to "$work/pw-backup" >"$work/pw-backup.log" 2>&1
    timeout 60 "$bin" serve --port 0 --db "$wrong_url" >"$work/pw-wrong.log" 2>&1; status=$?
    check "serve refuses a wrong password with status 3" test "$status" -eq 3
    timeout 60 "$bin" migrate --db "${param_url}-wrong" >>"$work/pw-wrong.log" 2>&1; status=$?
    check "migrate refuses a wrong password with status 3" test "$status" -eq 3
    check "migrate, backup and refused logins never print the password" sh -c "! grep -F -q '$secret' '$work/pw-migrate.log' '$work/pw-backup.log' '$work/pw-wrong.log'"
fi

# configuration from the environment, and its errors
FLOWSTACK_PORT=eighty "$bin" serve --db "$work/other.sqlite" >"$work/env.log" 2>&1; status=$?
check "a bad FLOWSTACK_PORT is refused" sh -c "test $status -ne 0 && grep -q 'FLOWSTACK_PORT=eighty' '$work/env.log'"

# flows validate: the shipped flows pass, a broken one is reported with paths
check "flows validate accepts the sample app" sh -c "'$bin' flows validate flows/*.json >/dev/null"
cat >"$work/broken.json" <<'JSON'
{"name": "onboarding", "kind": "stacked", "initial": [],
 "on": {"onboarding.showSecond": [{"from": "onboarding.first", "do": [{"jump": {}}]}],
        "onboarding.completed": [{"do": [{"present": {"flow": "nowhere"}}]}]}}
JSON
"$bin" flows validate "$work/broken.json" >"$work/validate.log" 2>&1; status=$?
check "flows validate exits 1 on a broken definition" test "$status" -eq 1
check "flows validate names the empty initial" grep -q "broken.json:/initial: " "$work/validate.log"
check "flows validate names the unknown effect" grep -q "broken.json:/on/onboarding.showSecond/0/do/0/jump: unknown effect" "$work/validate.log"

# flows graph: the sample app offline in each format; a file of one's own is drawn from its flow
check "flows graph draws the sample app as SVG" sh -c "'$bin' flows graph --format svg | grep -q 'onboarding.faceScan'"
check "flows graph writes DOT to a file" sh -c "'$bin' flows graph --format dot -o '$work/app.dot' && grep -q '^digraph flows' '$work/app.dot'"
check "flows graph draws Mermaid from a file" sh -c "'$bin' flows graph flows/home.json --format mermaid | grep -q 'home · tabbed'"
"$bin" flows graph "$work/broken.json" >/dev/null 2>"$work/graph.log"; status=$?
check "flows graph refuses a broken definition with paths (status 3)" sh -c "test $status -eq 3 && grep -q 'broken.json:/initial: ' '$work/graph.log'"
"$bin" flows graph --format png >/dev/null 2>&1; status=$?
check "flows graph refuses an unknown format" test "$status" -ne 0

echo "smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
