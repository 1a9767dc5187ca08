#!/usr/bin/env python3
"""Sends a table of malformed requests to a fresh flowstack server and checks every answer.

Usage: scripts/badinput.py PATH/TO/flowstack

The server runs on 127.0.0.1 on a free port with a temporary database. A few sessions are made
first (and their state read); then every case of CORPUS is sent on its own connection. Each
answer must be a 4xx `application/problem+json` document with type, title, status and detail,
except on the OFREP routes, whose answers are OFREP's (`ofrep`: `application/json` with
`errorCode` and `errorDetails`, or a 401 with no body), and unless the case names an exception
(`http_layer`: libmicrohttpd answers such requests itself,
before FlowStack sees them, with its own HTML page). Between groups /healthz must answer. The
event-stream routes (`GET /v1/sessions/{id}/events`, `POST …/events/ticket`) are in the corpus
too, and a few checks of streams that must open follow it: a Last-Event-ID that is not a version
counts as none (the stream starts with the current state), one equal to the version sends nothing
until the next, HEAD answers without a body and without hanging. Malformed batches of offline
taps (`POST …/actions/batch`) must be refused whole: the end check below shows nothing of them
was applied. At the
end the sessions must read back byte for byte as before, the server must stop cleanly, the
database must pass `PRAGMA integrity_check`, and the sessions must read back the same again
after a restart. Prints each failure with what came back, then `badinput: N passed, M failed`;
exits 1 when anything failed. Standard library only.

With FLOWSTACK_TEST_DB_KIND=postgresql the database is a throwaway PostgreSQL (scripts/pgserver.py,
removed after); answers must not show PostgreSQL's internals either (see PG_LEAKS), and
pg_amcheck takes the place of PRAGMA integrity_check.
"""
import http.client
import json
import re
import shutil
import socket
import sqlite3
import sys
import tempfile
import time

from harness.server import FlowStackProcess, Tally, database_kind, binary_argument
from harness.web import problem_failure as problem_document_failure

HOST = "127.0.0.1"
CASE_TIMEOUT = 10.0  # seconds one case may take before it counts as a hang
MAX_BODY = 1 << 20  # the server's default --max-body
MAX_STRING = 64 * 1024  # BodyLimits.maxStringBytes
MAX_DEPTH = 32  # BodyLimits.maxDepth
HEADER_MEMORY = 16 * 1024  # ServerConfiguration.connectionMemoryBytes

# What an error answer must never show: storage internals, source paths, traps, the temp dir.
# On PostgreSQL, libpq's and the server's words too: SQLSTATEs, constraint and relation errors.
PG_LEAKS = [r"(?i)postgres", r"(?i)libpq", r"PGRES_", r"(?i)sqlstate", r"(?i)duplicate key value", r"(?i)violates \S+ ?\S* constraint",
            r"(?i)relation \"", r"(?i)syntax error at or near", r"(?i)server closed the connection", r"(?i)connection to server at"]
LEAKS = [r"(?i)sqlite", r"GRDB", r"(?i)\bSQL\b", r"(?i)database ?error", r"\.swift\b", r"Sources/",
         r"(?i)fatal error", r"(?i)stack ?trace|backtrace", r"/work/|/home/|/usr/|/var/"]


# ---------------------------------------------------------------------------------------------
# Raw HTTP: every case is bytes on a fresh connection, so anything can be sent.

class Answer:
    """What came back: a status, headers and body; or an error, and whether the server closed
    the connection without answering (`closed`) rather than leaving it hanging."""

    def __init__(self, status=None, headers=None, body=b"", error=None, closed=False, seconds=0.0):
        self.status, self.headers, self.body, self.error, self.seconds = status, headers or {}, body, error, seconds
        self.closed = closed

    def header(self, name):
        return self.headers.get(name.lower())

    def summary(self):
        if self.error:
            return f"no answer ({self.error}) after {self.seconds:.2f}s"
        return (f"{self.status} Content-Type={self.header('Content-Type')!r} "
                f"body={self.body[:300].decode('utf-8', 'replace')!r}")


def build_request(method, path, headers, body):
    """Request bytes; `path`, `method` and header values may be str or bytes, sent as they are."""
    def raw(value):
        return value if isinstance(value, bytes) else value.encode("utf-8")
    lines = [raw(method) + b" " + raw(path) + b" HTTP/1.1", b"Host: 127.0.0.1", b"Connection: close"]
    names = {raw(name).lower() for name, _ in headers}
    if body is not None and b"content-length" not in names and b"transfer-encoding" not in names:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    for name, value in headers:
        lines.append(raw(name) + b": " + raw(value))
    return b"\r\n".join(lines) + b"\r\n\r\n" + (body or b"")


def exchange(port, data, method="GET", timeout=CASE_TIMEOUT):
    """Sends `data` (bytes, or a list of byte pieces) and reads one answer with http.client."""
    started = time.monotonic()
    sock = None
    try:
        sock = socket.create_connection((HOST, port), timeout=timeout)
        pieces = data if isinstance(data, list) else [data]
        try:
            for piece in pieces:
                sock.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before it read everything (413); read that answer
        response = http.client.HTTPResponse(sock, method=method)
        response.begin()
        body = response.read()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return Answer(response.status, headers, body, seconds=time.monotonic() - started)
    except (http.client.RemoteDisconnected, ConnectionResetError) as error:
        return Answer(error=repr(error), closed=True, seconds=time.monotonic() - started)
    except (OSError, http.client.HTTPException) as error:
        return Answer(error=repr(error), seconds=time.monotonic() - started)
    finally:
        if sock is not None:
            sock.close()


def request(port, method, path, headers=(), body=None):
    return exchange(port, build_request(method, path, list(headers), body), method=method)


# ---------------------------------------------------------------------------------------------
# The corpus

class Case:
    """One malformed request and what must come back.

    `expect`: the statuses accepted (all 4xx; none: the connection is closed without an answer).
    `http_layer`: why libmicrohttpd, not FlowStack,
    answers (its own HTML page, no problem document) — the only allowed exception to the problem
    check. `head`: a HEAD request, whose answer has no body to check. `forbid`: a pattern the
    answer must not contain. `ofrep`: an OFREP route, whose error bodies are the protocol's, not
    problem documents.
    """

    def __init__(self, group, name, method="GET", path="/", headers=(), body=None, raw=None,
                 expect=(400,), http_layer=None, head=False, forbid=None, ofrep=False):
        self.group, self.name = group, name
        self.method, self.path, self.headers, self.body, self.raw = method, path, list(headers), body, raw
        self.expect, self.http_layer, self.head, self.forbid = tuple(expect), http_layer, head, forbid
        self.ofrep = ofrep
        assert http_layer or all(400 <= status < 500 for status in self.expect), f"{name}: FlowStack answers 4xx"

    def data(self):
        if self.raw is not None:
            return self.raw
        return build_request(self.method, self.path, self.headers, self.body)


def j(value):
    return json.dumps(value).encode()


def nest(depth, inner=b"1"):
    return b"[" * depth + inner + b"]" * depth


def nest_objects(depth):
    return b'{"a":' * depth + b"1" + b"}" * depth


def corpus(ctx):
    """Every case, in groups. `ctx` holds the ids and tokens made at set-up."""
    s, tok, admin = ctx["s1"], ctx["t1"], ctx["admin"]
    home, home_tok = ctx["s2"], ctx["t2"]
    pending, pending_tok = ctx["s4"], ctx["t4"]
    auth = [("Authorization", "Bearer " + tok)]
    home_auth = [("Authorization", "Bearer " + home_tok)]
    pending_auth = [("Authorization", "Bearer " + pending_tok)]
    adm = [("Authorization", "Bearer " + admin)]
    sessions = "/v1/sessions"
    actions = f"/v1/sessions/{s}/actions"
    home_actions = f"/v1/sessions/{home}/actions"
    pending_actions = f"/v1/sessions/{pending}/actions"
    flow = "/v1/flows/bi-flow"
    flag = "/v1/flags/bi-flag"
    experiment = "/v1/experiments/bi-exp"
    evaluate = "/v1/flags/evaluate"
    good_flow = {"name": "bi-flow", "kind": "stacked", "initial": ["bi.first"], "on": {}}
    good_flag = {"variants": {"on": True, "off": False}, "defaultVariant": "off"}
    good_experiment = {"variants": [{"key": "a", "weight": 0.5}, {"key": "b", "weight": 0.5}]}
    cases = []

    def add(group, name, method, path, headers=(), body=None, **options):
        cases.append(Case(group, name, method, path, headers, body, **options))

    def with_field(document, key, value):
        changed = dict(document)
        changed[key] = value
        return j(changed)

    # --- invalid JSON, on every route that reads a body
    invalid_json = [
        ("empty body", b""), ("only whitespace", b" \r\n\t "), ("unclosed object", b'{"userId":"a"'),
        ("missing value", b'{"userId":}'), ("trailing comma", b'{"userId":"a",}'),
        ("single quotes", b"{'userId':'a'}"), ("unquoted key", b'{userId:"a"}'),
        ("NaN", b'{"userId":NaN}'), ("Infinity", b'{"userId":-Infinity}'),
        ("byte-order mark", b'\xef\xbb\xbf{"userId":"a"}'), ("trailing garbage", b'{"userId":"a"} x'),
        ("two documents", b'{"userId":"a"}{"userId":"b"}'), ("duplicate key", b'{"userId":"a","userId":"b"}'),
        ("raw control character", b'{"userId":"a\x01b"}'), ("raw newline in string", b'{"userId":"a\nb"}'),
        ("lone surrogate escape", b'{"userId":"\\ud800"}'), ("low surrogate first", b'{"userId":"\\udc00\\ud800"}'),
        ("invalid escape", b'{"userId":"\\x41"}'), ("short unicode escape", b'{"userId":"\\u12"}'),
        ("leading zero", b'{"userId":"a","attributes":{"n":01}}'), ("bare minus", b'{"userId":"a","attributes":{"n":-}}'),
        ("dot without digits", b'{"userId":"a","attributes":{"n":1.}}'), ("comment", b'{"userId":"a"/*c*/}'),
        ("form encoding", b"userId=a&x=1"), ("truncated literal", b'{"userId":"a","attributes":{"b":tru}}'),
        ("NUL byte", b'{"userId":"a"}\x00'),
    ]
    for name, body in invalid_json:
        add("invalid-json", f"POST /v1/sessions: {name}", "POST", sessions, body=body)
    for name, path, headers, method in [("action", actions, auth, "POST"), ("flow", flow, adm, "PUT"),
                                        ("flag", flag, adm, "PUT"), ("experiment", experiment, adm, "PUT"),
                                        ("evaluate", evaluate, adm, "POST")]:
        add("invalid-json", f"{method} {name}: unclosed array", method, path, headers, b'{"type":["back"')
        add("invalid-json", f"{method} {name}: empty body", method, path, headers, b"")

    # --- invalid UTF-8 in bodies, paths and headers
    for name, text in [("0xFF", b"\xff"), ("overlong slash", b"\xc0\xaf"), ("encoded surrogate", b"\xed\xa0\x80"),
                       ("truncated sequence", b"\xe2\x82"), ("above U+10FFFF", b"\xf4\x90\x80\x80"),
                       ("lone continuation", b"\x80")]:
        add("utf8", f"session userId with {name}", "POST", sessions, body=b'{"userId":"a' + text + b'"}')
    add("utf8", "action type with 0xFE", "POST", actions, auth, b'{"type":"back\xfe"}')
    add("utf8", "flow key with 0xFF", "PUT", flow, adm, b'{"name":"bi-flow","kind":"stacked","initial":["a"],"on":{"\xff":[]}}')
    add("utf8", "flag variant key with 0xC3", "PUT", flag, adm, b'{"variants":{"\xc3":true},"defaultVariant":"\xc3"}')
    add("utf8", "evaluate attribute with 0xFF", "POST", evaluate, adm, b'{"targetingKey":"a","attributes":{"c":"\xff"}}')
    add("utf8", "raw 0xFF byte outside a string", "POST", sessions, body=b'{"userId":"a",\xff}')
    add("utf8", "raw invalid UTF-8 in the session id", "GET", b"/v1/sessions/s_\xff\xfe", auth, expect=(400,))
    add("utf8", "percent-encoded invalid UTF-8 in the session id", "GET", "/v1/sessions/s_%FF%FE", auth, expect=(400,))
    add("utf8", "raw invalid UTF-8 in a flag key", "PUT", b"/v1/flags/\xc3\x28", adm, j(good_flag))
    add("utf8", "percent-encoded invalid UTF-8 in a flag key", "PUT", "/v1/flags/%C3%28", adm, j(good_flag))
    add("utf8", "invalid UTF-8 in a user id", "GET", "/v1/users/%ED%A0%80", adm, expect=(400,))
    add("utf8", "invalid UTF-8 in an unknown route", "GET", b"/\xff\xfe/x", expect=(400,))
    add("utf8", "invalid UTF-8 in the session token", "GET", f"/v1/sessions/{s}",
        [("Authorization", b"Bearer \xff\xfe\xfd")], expect=(401,))
    add("utf8", "invalid UTF-8 in the admin token", "GET", "/v1/flows", [("Authorization", b"Bearer \xc0\xaf")], expect=(401,))
    add("utf8", "invalid UTF-8 in Idempotency-Key", "POST", actions, auth + [("Idempotency-Key", b"k\xff")], j({"type": "back"}))
    # RFC 9110 allows obs-text (0x80-0xFF) in an entity tag: a well-formed tag of no version of ours.
    add("utf8", "invalid UTF-8 in If-Match", "POST", actions, auth + [("If-Match", b'"\xff"')], j({"type": "back"}),
        expect=(412,), forbid=r'"\\"-1\\""')
    add("utf8", "invalid UTF-8 in a query value", "GET", f"{actions}?limit=%FF", auth)

    # --- wrong types for every field of every body
    wrong = [("number", 1), ("null", None), ("bool", True), ("array", ["a"]), ("object", {"a": 1})]
    for kind, value in wrong:
        add("types", f"session userId as {kind}", "POST", sessions, body=j({"userId": value}))
    for kind, value in [("string", "US"), ("array", ["US"]), ("number", 3)]:
        add("types", f"session attributes as {kind}", "POST", sessions, body=j({"userId": "a", "attributes": value}))
    for kind, value in [("object", {"a": 1}), ("array", [1]), ("null", None)]:
        add("types", f"session attribute value as {kind}", "POST", sessions, body=j({"userId": "a", "attributes": {"country": value}}))
    for kind, value in [("string", "compact"), ("array", [])]:
        add("types", f"session traits as {kind}", "POST", sessions, body=j({"userId": "a", "traits": value}))
    add("types", "session trait value as number", "POST", sessions, body=j({"userId": "a", "traits": {"horizontalSizeClass": 2}}))
    add("types", "session trait horizontalSizeClass unknown", "POST", sessions, body=j({"userId": "a", "traits": {"horizontalSizeClass": "huge"}}))
    add("types", "session userId empty", "POST", sessions, body=j({"userId": ""}))
    add("types", "session userId over 128 bytes", "POST", sessions, body=j({"userId": "u" * 129}))
    add("types", "session userId with a control character", "POST", sessions, body=j({"userId": "a\u0007b"}))
    add("types", "session too many attributes", "POST", sessions, body=j({"userId": "a", "attributes": {f"k{i}": i for i in range(65)}}))
    for kind, value in [("array", []), ("string", "x"), ("number", 1), ("null", None)]:
        add("types", f"session body as {kind}", "POST", sessions, body=j(value))
    for kind, value in wrong:
        add("types", f"action type as {kind}", "POST", actions, auth, j({"type": value}))
    add("types", "action type empty", "POST", actions, auth, j({"type": ""}))
    add("types", "action type over 200 bytes", "POST", actions, auth, j({"type": "t" * 201}))
    add("types", "action missing type", "POST", actions, auth, j({"from": "e3"}))
    for kind, value in [("number", 3), ("bool", False), ("array", ["e3"]), ("object", {})]:
        add("types", f"action from as {kind}", "POST", actions, auth, j({"type": "back", "from": value}))
    for kind, value in [("string", "x"), ("array", [1]), ("number", 1), ("bool", True)]:
        add("types", f"action params as {kind}", "POST", actions, auth, j({"type": "back", "params": value}))
    for kind, value in [("string", "true"), ("number", 1), ("array", [True])]:
        add("types", f"action interactive as {kind}", "POST", actions, auth, j({"type": "back", "interactive": value}))
    for kind, value in [("array", []), ("string", "back")]:
        add("types", f"action body as {kind}", "POST", actions, auth, j(value))
    for kind, value in [("a screen no longer shown", "e1"), ("a flow id", "f1"), ("e0", "e0"), ("20 digits", "e" + "9" * 20),
                        ("a leading zero", "e03"), ("an empty string", ""), ("unicode", "e\u0663")]:
        add("types", f"action from {kind}", "POST", actions, auth, j({"type": "onboarding.showSecond", "from": value}),
            expect=(400, 409))
    for kind, value in [("string", "1"), ("bool", True), ("float", 0.5), ("negative", -1), ("out of range", 9)]:
        add("types", f"home.selectTab index as {kind}", "POST", home_actions, home_auth,
            j({"type": "home.selectTab", "params": {"index": value}}), expect=(400, 422))
    for kind, value in [("string", "half"), ("above 1", 1.5), ("negative", -0.1), ("null", None)]:
        add("types", f"interaction.update progress as {kind}", "POST", pending_actions, pending_auth,
            j({"type": "interaction.update", "params": {"progress": value}}))
    add("types", "interaction.update without progress", "POST", pending_actions, pending_auth, j({"type": "interaction.update"}))
    add("types", "interaction.end velocity as string", "POST", pending_actions, pending_auth,
        j({"type": "interaction.end", "params": {"velocity": "fast"}}))
    add("types", "another action while an interaction is pending", "POST", pending_actions, pending_auth,
        j({"type": "back"}), expect=(409,))
    definition_status = (400, 422)
    for key, kind, value in [("name", "number", 7), ("name", "null", None), ("name", "bad characters", "a/b"),
                             ("name", "another flow's name", "onboarding"), ("kind", "number", 1),
                             ("kind", "unknown", "circular"), ("initial", "string", "bi.first"),
                             ("initial", "empty array", []), ("initial", "numbers", [5]),
                             ("initial", "flow as number", [{"flow": 5}]), ("selected", "string", "0"),
                             ("on", "array", []), ("on", "string", "x"), ("on", "rule as object", {"a.b": {"do": []}}),
                             ("on", "rule from as number", {"a.b": [{"from": 1, "do": []}]}),
                             ("on", "rule do as string", {"a.b": [{"do": "push"}]}),
                             ("on", "unknown effect", {"a.b": [{"do": [{"jump": "x"}]}]}),
                             ("on", "when as string", {"a.b": [{"when": "x", "do": [{"pop": {}}]}]}),
                             ("description", "number", 1), ("version", "string", "2"), ("live", "string", "yes")]:
        add("types", f"flow {key} as {kind}", "PUT", flow, adm, with_field(good_flow, key, value), expect=definition_status)
    for kind, value in [("array", []), ("string", "x"), ("null", None)]:
        add("types", f"flow body as {kind}", "PUT", flow, adm, j(value), expect=definition_status)
    for key, kind, value in [("variants", "array", [True]), ("variants", "string", "on"), ("variants", "empty", {}),
                             ("defaultVariant", "number", 0), ("defaultVariant", "unknown variant", "maybe"),
                             ("enabled", "string", "yes"), ("rules", "object", {}), ("rules", "rule without when", [{"variant": "on"}]),
                             ("rules", "when as array", [{"when": [], "variant": "on"}]),
                             ("rules", "variant as number", [{"when": {"attribute": "country", "is": "DE"}, "variant": 1}]),
                             ("rules", "attribute as number", [{"when": {"attribute": 7, "is": "DE"}, "variant": "on"}]),
                             ("split", "weight as string", [{"variant": "on", "weight": "1"}]),
                             ("split", "weight above 1", [{"variant": "on", "weight": 2}]),
                             ("seed", "number", 1), ("hashAttribute", "array", ["userId"]), ("description", "object", {})]:
        add("types", f"flag {key} as {kind}", "PUT", flag, adm, with_field(good_flag, key, value), expect=definition_status)
    for kind, value in [("array", []), ("string", "x"), ("number", 1)]:
        add("types", f"flag body as {kind}", "PUT", flag, adm, j(value), expect=definition_status)
    for key, kind, value in [("variants", "object", {"a": 1}), ("variants", "empty", []), ("variants", "numbers", [1, 2]),
                             ("variants", "key missing", [{"weight": 1}]), ("variants", "weight as string", [{"key": "a", "weight": "1"}]),
                             ("variants", "negative weight", [{"key": "a", "weight": -1}]),
                             ("variants", "flows as string", [{"key": "a", "weight": 1, "flows": "onboarding"}]),
                             ("variants", "flow version as string", [{"key": "a", "weight": 1, "flows": {"onboarding": "2"}}]),
                             ("variants", "flow version missing", [{"key": "a", "weight": 1, "flows": {"onboarding": 99}}]),
                             ("variants", "flow version fractional", [{"key": "a", "weight": 1, "flows": {"onboarding": 1.5}}]),
                             ("coverage", "string", "1"), ("coverage", "above 1", 2), ("seed", "number", 5),
                             ("hashAttribute", "number", 5), ("when", "string", "x"), ("enabled", "number", 1),
                             ("description", "number", 1)]:
        add("types", f"experiment {key} as {kind}", "PUT", experiment, adm, with_field(good_experiment, key, value),
            expect=definition_status)
    for kind, value in [("array", []), ("null", None)]:
        add("types", f"experiment body as {kind}", "PUT", experiment, adm, j(value), expect=definition_status)
    for key, kind, value in [("targetingKey", "number", 1), ("targetingKey", "object", {}), ("attributes", "string", "x"),
                             ("attributes", "array", [])]:
        add("types", f"evaluate {key} as {kind}", "POST", evaluate, adm, j({key: value}))
    for kind, value in [("array", []), ("string", "x")]:
        add("types", f"evaluate body as {kind}", "POST", evaluate, adm, j(value))

    # --- nesting deeper than the parser's limit
    deep = MAX_DEPTH + 1
    add("depth", f"session body {deep} arrays deep", "POST", sessions, body=nest(deep))
    add("depth", f"session attribute {deep} objects deep", "POST", sessions,
        body=b'{"userId":"a","attributes":{"x":' + nest_objects(deep - 2) + b"}}")
    add("depth", f"action params {deep} deep", "POST", actions, auth, b'{"type":"back","params":' + nest_objects(deep - 1) + b"}")
    add("depth", "action params 100000 arrays deep", "POST", actions, auth, b'{"type":"back","params":' + b"[" * 100000)
    add("depth", f"flow definition {deep} deep", "PUT", flow, adm, b'{"name":"bi-flow","on":' + nest_objects(deep - 1) + b"}")
    add("depth", f"flag variant value {deep} deep", "PUT", flag, adm,
        b'{"defaultVariant":"on","variants":{"on":' + nest(deep - 2) + b"}}")
    add("depth", f"experiment {deep} deep", "PUT", experiment, adm, b'{"variants":' + nest(deep - 1) + b"}")
    add("depth", f"evaluate attributes {deep} deep", "POST", evaluate, adm, b'{"attributes":{"a":' + nest(deep - 2) + b"}}")
    add("depth", "1 MiB of open brackets", "POST", sessions, body=b"[" * (MAX_BODY - 16))

    # --- strings over 64 KiB, numbers out of range
    huge = "x" * (MAX_STRING + 1)
    add("size", "session userId over 64 KiB", "POST", sessions, body=j({"userId": huge}))
    add("size", "session attribute key over 64 KiB", "POST", sessions, body=j({"userId": "a", "attributes": {huge: 1}}))
    add("size", "session string of escapes over 64 KiB", "POST", sessions,
        body=b'{"userId":"' + b"\\u0041" * (MAX_STRING + 1) + b'"}')
    add("size", "action type over 64 KiB", "POST", actions, auth, j({"type": huge}))
    add("size", "action param over 64 KiB", "POST", actions, auth, j({"type": "back", "params": {"p": huge}}))
    add("size", "flow description over 64 KiB", "PUT", flow, adm, with_field(good_flow, "description", huge))
    add("size", "flag seed over 64 KiB", "PUT", flag, adm, with_field(good_flag, "seed", huge))
    add("size", "experiment seed over 64 KiB", "PUT", experiment, adm, with_field(good_experiment, "seed", huge))
    add("size", "evaluate targetingKey over 64 KiB", "POST", evaluate, adm, j({"targetingKey": huge}))
    for name, number in [("1e400", b"1e400"), ("-1e400", b"-1e400"), ("600 digits", b"9" * 600)]:
        add("size", f"session attribute {name}", "POST", sessions, body=b'{"userId":"a","attributes":{"n":' + number + b"}}")
        add("size", f"selectTab index {name}", "POST", home_actions, home_auth,
            b'{"type":"home.selectTab","params":{"index":' + number + b"}}")
    forty = b"1234567890123456789012345678901234567890"
    add("size", "40-digit userId", "POST", sessions, body=b'{"userId":' + forty + b"}")
    add("size", "40-digit selectTab index", "POST", home_actions, home_auth,
        b'{"type":"home.selectTab","params":{"index":' + forty + b"}}", expect=(400, 422))
    add("size", "-40-digit selectTab index", "POST", home_actions, home_auth,
        b'{"type":"home.selectTab","params":{"index":-' + forty + b"}}", expect=(400, 422))
    add("size", "40-digit interaction progress", "POST", pending_actions, pending_auth,
        b'{"type":"interaction.update","params":{"progress":' + forty + b"}}")
    add("size", "40-digit flow selected", "PUT", "/v1/flows/bi-tabs", adm,
        b'{"name":"bi-tabs","kind":"tabbed","initial":["a","b"],"selected":' + forty + b',"on":{}}', expect=definition_status)
    add("size", "40-digit flag split weight", "PUT", flag, adm,
        b'{"variants":{"on":true},"defaultVariant":"on","split":[{"variant":"on","weight":' + forty + b"}]}",
        expect=definition_status)
    add("size", "40-digit experiment coverage", "PUT", experiment, adm,
        b'{"variants":[{"key":"a","weight":1}],"coverage":' + forty + b"}", expect=definition_status)
    add("size", "40-digit experiment flow version", "PUT", experiment, adm,
        b'{"variants":[{"key":"a","weight":1,"flows":{"onboarding":' + forty + b"}}]}", expect=definition_status)
    add("size", "60,000 keys in action params", "POST", actions, auth,
        b'{"type":"bi.nothing","params":{' + b",".join(b'"k%d":%d' % (i, i) for i in range(60000)) + b"}}", expect=(422,))
    add("size", "100,000 elements in a flow's initial", "PUT", flow, adm, with_field(good_flow, "initial", [5] * 100000),
        expect=definition_status)
    add("size", "1e400 flag split weight", "PUT", flag, adm,
        b'{"variants":{"on":true},"defaultVariant":"on","split":[{"variant":"on","weight":1e400}]}')

    # --- unknown fields
    add("unknown-fields", "session with an unknown field", "POST", sessions, body=j({"userId": "a", "role": "admin"}))
    add("unknown-fields", "session with a misspelt field", "POST", sessions, body=j({"userID": "a"}))
    add("unknown-fields", "action with params misspelt", "POST", actions, auth, j({"type": "back", "parmas": {}}))
    add("unknown-fields", "action with version", "POST", actions, auth, j({"type": "back", "version": 3}))
    add("unknown-fields", "flow with an unknown field", "PUT", flow, adm, with_field(good_flow, "owner", "x"), expect=definition_status)
    add("unknown-fields", "flow rule with an unknown field", "PUT", flow, adm,
        with_field(good_flow, "on", {"a.b": [{"do": [{"pop": {}}], "unless": {}}]}), expect=definition_status)
    add("unknown-fields", "flag with an unknown field", "PUT", flag, adm, with_field(good_flag, "owner", "x"), expect=definition_status)
    add("unknown-fields", "experiment with an unknown field", "PUT", experiment, adm, with_field(good_experiment, "goal", "x"),
        expect=definition_status)
    add("unknown-fields", "evaluate with an unknown field", "POST", evaluate, adm, j({"targetingKey": "a", "flags": ["x"]}))

    # --- path tricks
    for name, path in [("dot-dot into healthz", f"/v1/sessions/{s}/../../../healthz"), ("dot-dot segment", "/v1/sessions/.."),
                       ("encoded dot-dot", "/v1/sessions/%2E%2E"), ("encoded slash in id", f"/v1/sessions/{s}%2Factions"),
                       ("NUL in id", f"/v1/sessions/{s}%00"), ("encoded NUL after a route", "/healthz%00"),
                       ("double slash", f"/v1//sessions/{s}"), ("leading double slash", f"//v1/sessions/{s}"),
                       ("trailing slash", f"/v1/sessions/{s}/"), ("empty id", "/v1/sessions//actions"),
                       ("backslash", f"/v1\\sessions\\{s}"), ("unicode id", "/v1/sessions/s_\u00e9\u4e2d"),
                       ("encoded unicode id", "/v1/sessions/s_%C3%A9"), ("8 KiB id", "/v1/sessions/" + "a" * 8192),
                       ("semicolon parameter", f"/v1/sessions/{s};x=1"), ("no leading slash", "v1/sessions"),
                       ("absolute form to another host", "http://example.com/v1/flows"), ("asterisk", "*"),
                       ("dot segment in flow name", "/v1/flows/./onboarding"), ("percent alone", "/v1/flows/%"),
                       ("encoded path traversal", "/v1/flows/..%2F..%2Fetc%2Fpasswd")]:
        headers = adm if "flows" in path else auth
        add("paths", name, "GET", path, headers, expect=(400, 404))
    add("paths", "flow version with a dot-dot", "GET", "/v1/flows/onboarding/versions/..", adm)
    add("paths", "query limit not a number", "GET", f"{actions}?limit=abc", auth)
    add("paths", "query limit 0", "GET", f"{actions}?limit=0", auth)
    add("paths", "query limit negative", "GET", f"{actions}?limit=-1", auth)
    add("paths", "query limit 40 digits", "GET", f"{actions}?limit={forty.decode()}", auth)
    add("paths", "query after 1e3", "GET", f"{actions}?after=1e3", auth)
    add("paths", "query after negative", "GET", f"{actions}?after=-5", auth)
    add("paths", "query activate maybe", "PUT", f"{flow}?activate=maybe", adm, j(good_flow))
    add("paths", "HEAD on an unknown session", "HEAD", "/v1/sessions/s_nope", auth, expect=(404,), head=True)

    # --- bad ids
    add("ids", "unknown session id", "GET", "/v1/sessions/s_AAAAAAAAAAAAAAAAAAAAAA", auth, expect=(404,))
    add("ids", "session id of 65 characters", "GET", "/v1/sessions/" + "s" * 65, auth, expect=(404,))
    add("ids", "session id with a dot", "GET", "/v1/sessions/s.1", auth, expect=(404,))
    add("ids", "session id with a quote", "GET", "/v1/sessions/s%27%20OR%201=1--", auth, expect=(404,))
    add("ids", "delete an unknown session", "DELETE", "/v1/sessions/s_AAAAAAAAAAAAAAAAAAAAAA", auth, expect=(404,))
    add("ids", "actions of an unknown session", "POST", "/v1/sessions/s_AAAAAAAAAAAAAAAAAAAAAA/actions", auth,
        j({"type": "back"}), expect=(404,))
    for version in ["0", "-1", "abc", "1.5", "1e3", forty.decode(), "%20"]:
        add("ids", f"flow version {version}", "GET", f"/v1/flows/onboarding/versions/{version}", adm)
    add("ids", "activate a missing flow version", "POST", "/v1/flows/onboarding/versions/999/activate", adm, expect=(404,))
    add("ids", "activate version 0", "POST", "/v1/flows/onboarding/versions/0/activate", adm)
    add("ids", "unknown flow", "GET", "/v1/flows/no-such-flow", adm, expect=(404,))
    add("ids", "flag key with a slash", "PUT", "/v1/flags/a%2Fb", adm, j(good_flag))
    add("ids", "flag key of 101 characters", "PUT", "/v1/flags/" + "k" * 101, adm, j(good_flag))
    add("ids", "flag key with a space", "PUT", "/v1/flags/a%20b", adm, j(good_flag))
    add("ids", "experiment key with unicode", "PUT", "/v1/experiments/%C3%A9", adm, j(good_experiment))
    add("ids", "unknown experiment report", "GET", "/v1/experiments/none/report", adm, expect=(404,))
    report = "/v1/experiments/bi-report/report"
    add("ids", "report metric no session reached", "GET", report + "?metric=checkout", adm)
    add("ids", "report metric of 2,000 characters", "GET", report + "?metric=" + "m" * 2000, adm, forbid="m" * 200)
    add("ids", "report metric of invalid UTF-8", "GET", report + "?metric=%FF%FE", adm)
    add("ids", "report empty metric", "GET", report + "?metric=", adm)
    add("ids", "report unknown baseline", "GET", report + "?baseline=nobody", adm)
    add("ids", "report baseline of 2,000 characters", "GET", report + "?baseline=" + "b" * 2000, adm, forbid="b" * 200)
    add("ids", "unknown user", "GET", "/v1/users/nobody-at-all", adm, expect=(404,))
    add("ids", "reset an unknown user", "DELETE", "/v1/users/nobody-at-all/onboarding", adm, expect=(404,))

    # --- wrong methods
    for method, path in [("PATCH", sessions), ("GET", sessions), ("PUT", f"/v1/sessions/{s}"), ("PATCH", actions),
                         ("DELETE", actions), ("POST", "/healthz"), ("DELETE", "/metrics"), ("PUT", "/openapi.yaml"),
                         ("POST", "/v1/flows"), ("DELETE", "/v1/flags/eu-face-scan"), ("GET", "/v1/flows/onboarding/versions/1/activate"),
                         ("PUT", "/v1/experiments/bi-exp/report"), ("FOO", "/healthz"), ("get", "/healthz"),
                         ("TRACE", "/healthz"), ("M" * 200, "/v1/sessions")]:
        add("methods", f"{method[:12]} {path[:40]}", method, path, adm if "/v1/f" in path or "/v1/e" in path else auth,
            expect=(405,))

    # --- missing, malformed and wrong tokens
    state = f"/v1/sessions/{s}"
    unknown_session = "/v1/sessions/s_AAAAAAAAAAAAAAAAAAAAAA"
    for name, value in [("no Authorization", None), ("Bearer without a token", "Bearer"), ("Bearer and spaces", "Bearer    "),
                        ("Basic scheme", "Basic YWRtaW46YWRtaW4="), ("token without a scheme", tok),
                        ("wrong token", "Bearer " + "A" * 43), ("another session's token", "Bearer " + home_tok),
                        ("admin token on a session", "Bearer " + admin), ("token with extra words", f"Bearer {tok} extra"),
                        ("token over 512 bytes", "Bearer " + "t" * 600), ("token with a tab", f"Bearer \t{tok}x"),
                        ("empty header", "")]:
        headers = [] if value is None else [("Authorization", value)]
        add("tokens", f"session GET: {name}", "GET", state, headers, expect=(401,))
    add("tokens", "session action without a token", "POST", actions, [], j({"type": "back"}), expect=(401,))
    add("tokens", "session action with another session's token", "POST", actions, home_auth, j({"type": "back"}), expect=(401,))
    add("tokens", "session delete with a wrong token", "DELETE", state, [("Authorization", "Bearer nope")], expect=(401,))
    add("tokens", "action log with a wrong token", "GET", actions, [("Authorization", "Bearer nope")], expect=(401,))
    for name, value in [("no Authorization", None), ("session token on an admin route", "Bearer " + tok),
                        ("wrong admin token", "Bearer " + admin + "x"), ("admin token prefix", "Bearer " + admin[:-1]),
                        ("lowercase scheme, wrong token", "bearer nope"), ("Basic scheme", "Basic " + admin)]:
        headers = [] if value is None else [("Authorization", value)]
        add("tokens", f"admin GET /v1/flows: {name}", "GET", "/v1/flows", headers, expect=(401,))
    add("tokens", "admin PUT flag without a token", "PUT", flag, [], j(good_flag), expect=(401,))
    add("tokens", "admin PUT flow with a session token", "PUT", flow, auth, j(good_flow), expect=(401,))
    add("tokens", "admin evaluate with a wrong token", "POST", evaluate, [("Authorization", "Bearer x")], j({}), expect=(401,))
    add("tokens", "admin reset onboarding without a token", "DELETE", "/v1/users/bi-ada/onboarding", [], expect=(401,))

    # --- the edge protocol: predictions, dry runs, bundles (nothing they refuse may change a session)
    dry = f"{actions}?dryRun=true"
    for name, query in [("dryRun=yes", "dryRun=yes"), ("dryRun empty", "dryRun="), ("dryRun=1", "dryRun=1"),
                        ("dryRun=TRUE", "dryRun=TRUE"), ("dryRun of 4,000 characters", "dryRun=" + "t" * 4000),
                        ("dryRun invalid UTF-8", "dryRun=%FF"), ("predict=maybe", "predict=maybe"),
                        ("predict empty", "predict="), ("dryRun and a bad predict", "dryRun=true&predict=2")]:
        add("edge", f"action: {name}", "POST", f"{actions}?{query}", auth, j({"type": "back"}), expect=(400,))
    add("edge", "state: predict=yes", "GET", f"{state}?predict=yes", auth, expect=(400,))
    add("edge", "create: predict=on", "POST", f"{sessions}?predict=on", body=j({"userId": "bi-edge"}), expect=(400,))
    add("edge", "dry run: malformed JSON", "POST", dry, auth, b'{"type":', expect=(400,))
    add("edge", "dry run: unknown field", "POST", dry, auth, j({"type": "back", "version": 1}), expect=(400,))
    add("edge", "dry run: nobody handles it", "POST", dry, auth, j({"type": "bi.nothing"}), expect=(422,))
    add("edge", "dry run: a stale from", "POST", dry, auth, j({"type": "back", "from": "e999"}), expect=(409,))
    add("edge", "dry run: If-Match of another version", "POST", dry, auth + [("If-Match", '"999"')], j({"type": "back"}),
        expect=(412,))
    add("edge", "dry run: malformed If-Match", "POST", dry, auth + [("If-Match", "7")], j({"type": "back"}), expect=(400,))
    add("edge", "dry run: an unknown link", "POST", dry, auth, j({"type": "link", "params": {"uri": "/bi/none"}}), expect=(422,))
    add("edge", "dry run: a link that is not a URI", "POST", dry, auth, j({"type": "link", "params": {"uri": 5}}), expect=(400, 422))
    add("edge", "dry run: without a token", "POST", dry, [], j({"type": "back"}), expect=(401,))
    add("edge", "dry run: another session's token", "POST", dry, home_auth, j({"type": "back"}), expect=(401,))
    add("edge", "dry run: unknown session", "POST", f"{unknown_session}/actions?dryRun=true", auth, j({"type": "back"}),
        expect=(404,))
    add("edge", "dry run: body over the limit", "POST", dry, auth, j({"type": "back", "params": {"p": "x" * 2_000_000}}),
        expect=(413,))
    bundle = f"{state}/bundle"
    add("edge", "bundle: no token", "GET", bundle, [], expect=(401,))
    add("edge", "bundle: wrong token", "GET", bundle, [("Authorization", "Bearer " + "A" * 43)], expect=(401,))
    add("edge", "bundle: another session's token", "GET", bundle, home_auth, expect=(401,))
    add("edge", "bundle: the admin token", "GET", bundle, adm, expect=(401,))
    add("edge", "bundle: unknown session", "GET", f"{unknown_session}/bundle", auth, expect=(404,))
    add("edge", "bundle: session id of 65 characters", "GET", "/v1/sessions/" + "s" * 65 + "/bundle", auth, expect=(404,))
    for method in ["POST", "PUT", "DELETE"]:
        add("edge", f"bundle: {method}", method, bundle, auth, b"{}" if method != "DELETE" else None, expect=(405,))

    # --- event streams and their tickets (set_up made the tickets)
    events = f"/v1/sessions/{s}/events"
    ticket_route = f"{events}/ticket"
    unknown = "/v1/sessions/s_AAAAAAAAAAAAAAAAAAAAAA"
    for name, headers in [("no credentials", []), ("wrong token", [("Authorization", "Bearer " + "A" * 43)]),
                          ("another session's token", home_auth), ("admin token", adm),
                          ("Basic scheme", [("Authorization", "Basic YWRhOmFkYQ==")]), ("empty Authorization", [("Authorization", "")]),
                          ("a ticket as the bearer token", [("Authorization", "Bearer " + ctx["ticket_bearer"])])]:
        add("events", f"stream: {name}", "GET", events, headers, expect=(401,))
    # A token in a URL ends up in logs: refused even beside a good header.
    add("events", "stream: token in the query", "GET", f"{events}?token={tok}", [], expect=(400,))
    add("events", "stream: token in the query and a good header", "GET", f"{events}?token={tok}", auth, expect=(400,))
    add("events", "stream: access_token in the query", "GET", f"{events}?access_token={tok}", [], expect=(400,))
    add("events", "stream: token in the query and a ticket", "GET", f"{events}?ticket=st_x&token={tok}", [], expect=(400,))
    add("events", "stream: unknown session", "GET", f"{unknown}/events", auth, expect=(404,))
    add("events", "stream: unknown session without credentials", "GET", f"{unknown}/events", [], expect=(401,))
    add("events", "stream: session id of 65 characters", "GET", "/v1/sessions/" + "s" * 65 + "/events", auth, expect=(404,))
    for name, value in [("empty", ""), ("garbage", "garbage"), ("st_ alone", "st_"), ("with a space", "st_a%20b"),
                        ("with a NUL", "st_a%00b"), ("non-ASCII", "st_%C3%A9"), ("129 characters", "st_" + "a" * 126),
                        ("4,000 characters", "st_" + "a" * 3997), ("of 64 hex digits", "0" * 64),
                        ("the session's token", tok), ("the admin token", admin)]:
        add("events", f"stream: ticket {name}", "GET", f"{events}?ticket={value}", [], expect=(401,))
    add("events", "stream: ticket with percent-encoded invalid UTF-8", "GET", f"{events}?ticket=st_%FF%FE", [], expect=(400, 401))
    add("events", "stream: ticket twice in the query", "GET", f"{events}?ticket=a&ticket=b", [], expect=(400, 401))
    add("events", "stream: a ticket of a deleted session, on that session", "GET",
        f"/v1/sessions/{ctx['gone']}/events?ticket={ctx['ticket_gone']}", [], expect=(401, 404))
    add("events", "stream: a ticket of a deleted session, on another", "GET", f"{events}?ticket={ctx['ticket_gone']}", [], expect=(401,))
    add("events", "stream: a ticket of another session", "GET", f"{events}?ticket={ctx['ticket_home']}", [], expect=(401,))
    add("events", "stream: a ticket on an unknown session", "GET", f"{unknown}/events?ticket={ctx['ticket_other']}", [],
        expect=(401, 404))
    add("events", "HEAD stream: no credentials", "HEAD", events, [], expect=(401,), head=True)
    add("events", "HEAD stream: unknown session", "HEAD", f"{unknown}/events", auth, expect=(404,), head=True)
    add("events", "HEAD stream: token in the query", "HEAD", f"{events}?token={tok}", [], expect=(400,), head=True)
    for method in ["POST", "PUT", "DELETE", "PATCH"]:
        add("events", f"{method} on the stream route", method, events, auth, b"{}" if method != "DELETE" else None, expect=(405,))
    for name, headers in [("no token", []), ("wrong token", [("Authorization", "Bearer nope")]),
                          ("another session's token", home_auth), ("admin token", adm),
                          ("a ticket as the bearer token", [("Authorization", "Bearer " + ctx["ticket_bearer"])]),
                          ("token in the query only", [])]:
        path = f"{ticket_route}?token={tok}" if "query" in name else ticket_route
        add("events", f"ticket: {name}", "POST", path, headers, expect=(401,))
    add("events", "ticket: unknown session", "POST", f"{unknown}/events/ticket", auth, expect=(404,))
    for method in ["GET", "PUT", "DELETE"]:
        add("events", f"ticket: {method}", method, ticket_route, auth, expect=(405,))

    # --- If-Match, malformed and stale (the body is an action that would apply)
    select_tab = j({"type": "home.selectTab", "params": {"index": 1}})
    for name, value in [("unquoted version", "2"), ("unclosed quote", '"2'), ("empty tag", '""'), ("weak prefix only", "W/"),
                        ("garbage", "version two"), ("trailing comma list", '"2",'), ("star in a list", '*, "2"'),
                        ("quote inside", '"2"3"')]:
        add("if-match", f"If-Match {name}", "POST", home_actions, home_auth + [("If-Match", value)], select_tab)
    for name, value in [("stale version", '"1"'), ("future version", '"99"'), ("40-digit version", f'"{forty.decode()}"'),
                        ("weak tag of the version", 'W/"2"'), ("another server\'s tag", '"abc"'), ("negative", '"-2"')]:
        add("if-match", f"If-Match {name}", "POST", home_actions, home_auth + [("If-Match", value)], select_tab, expect=(412,),
            forbid=r'"\\"-1\\""')

    # --- bad Idempotency-Key (with an action that would apply)
    for name, value in [("empty", ""), ("256 characters", "k" * 256), ("with a space", "a b"), ("with a tab", "a\tb"),
                        ("non-ASCII", "cl\u00e9"), ("DEL character", "a\x7fb")]:
        add("idempotency", f"Idempotency-Key {name}", "POST", home_actions, home_auth + [("Idempotency-Key", value)], select_tab)
    add("idempotency", "Idempotency-Key reused with another body", "POST", f"/v1/sessions/{ctx['s5']}/actions",
        [("Authorization", "Bearer " + ctx["t5"]), ("Idempotency-Key", "bi-key-1")], j({"type": "onboarding.completed"}),
        expect=(422,))

    # --- batches of offline taps: every malformed batch is refused whole, before anything applies
    batch = f"/v1/sessions/{s}/actions/batch"
    tap = {"key": "bi-tap", "version": 0, "action": {"type": "onboarding.showSecond"}}

    def tapped(**changes):
        item = dict(tap)
        for key, value in changes.items():
            if value is KeyError:
                item.pop(key, None)
            else:
                item[key] = value
        return item

    for name, body in [("empty body", b""), ("unclosed array", b'{"actions":[{"key":"a"'), ("trailing comma", b'{"actions":[],}'),
                       ("duplicate member", b'{"actions":[],"actions":[]}'), ("invalid UTF-8 in a key", b'{"actions":[{"key":"\xff"}]}'),
                       ("NUL byte after", j({"actions": [tap]}) + b"\x00")]:
        add("batch", f"batch: {name}", "POST", batch, auth, body)
    for name, value in [("an array", [tap]), ("a string", "actions"), ("null", None), ("a number", 1)]:
        add("batch", f"batch body as {name}", "POST", batch, auth, j(value))
    for name, value in [("missing", KeyError), ("an object", {"0": tap}), ("a string", "tap"), ("null", None), ("empty", []),
                        ("101 items", [tapped(key=f"k{i}", version=i) for i in range(101)])]:
        body = j({}) if value is KeyError else j({"actions": value})
        add("batch", f"batch actions {name}", "POST", batch, auth, body)
    add("batch", "batch with an unknown member", "POST", batch, auth, j({"actions": [tap], "atomic": True}))
    for name, value in [("a number", 5), ("an array", [tap]), ("a string", "tap"), ("null", None)]:
        add("batch", f"batch item as {name}", "POST", batch, auth, j({"actions": [value]}))
    add("batch", "batch item with an unknown member", "POST", batch, auth, j({"actions": [tapped(when="now")]}))
    for name, value in [("missing", KeyError), ("a number", 7), ("null", None), ("empty", ""), ("with a space", "a b"),
                        ("non-ASCII", "cl\u00e9"), ("256 characters", "k" * 256), ("a DEL character", "a\x7fb"), ("an object", {"k": 1})]:
        add("batch", f"batch key {name}", "POST", batch, auth, j({"actions": [tapped(key=value)]}))
    # A key twice in one batch is no bad input: it is judged as a POST repeating the key
    # (BatchAPITests.aKeyRepeatedInOneBatchIsOneTap).
    for name, value in [("missing", KeyError), ("a string", "0"), ("negative", -1), ("1.5", 1.5), ("true", True), ("null", None),
                        ("an array", [0])]:
        add("batch", f"batch version {name}", "POST", batch, auth, j({"actions": [tapped(version=value)]}))
    for name, number in [("1e400", b"1e400"), ("40 digits", forty), ("-40 digits", b"-" + forty)]:
        add("batch", f"batch version {name}", "POST", batch, auth,
            b'{"actions":[{"key":"k","version":' + number + b',"action":{"type":"back"}}]}')
    for name, value in [("words", "yesterday"), ("a number", 1764064800), ("without an offset", "2026-11-25T10:00:00"),
                        ("a date only", "2026-11-25"), ("30 February", "2026-02-30T00:00:00Z"), ("hour 25", "2026-11-25T25:00:00Z"),
                        ("offset without a colon", "2026-11-25T10:00:00+0100"), ("10 fraction digits", "2026-11-25T10:00:00.1234567890Z"),
                        ("year 0 in UTC", "0001-01-01T00:00:00+01:00"), ("2,000 characters", "2026-11-25T10:00:00Z" + "0" * 1980),
                        ("full-width digits", "\uff12\uff10\uff12\uff16-11-25T10:00:00Z"), ("an object", {"t": 1}), ("true", True)]:
        add("batch", f"batch at {name}", "POST", batch, auth, j({"actions": [tapped(at=value)]}))
    for name, value in [("missing", KeyError), ("a string", "onboarding.showSecond"), ("null", None), ("an array", []),
                        ("without a type", {"from": "e3"}), ("with an empty type", {"type": ""}), ("with a misspelt member", {"type": "back", "parmas": {}}),
                        ("with params an array", {"type": "back", "params": [1]}), ("with from a number", {"type": "back", "from": 3}),
                        ("with interactive a string", {"type": "back", "interactive": "yes"}), ("with a type over 64 KiB", {"type": huge})]:
        add("batch", f"batch action {name}", "POST", batch, auth, j({"actions": [tapped(action=value)]}))
    add("batch", f"batch action params {deep} deep", "POST", batch, auth,
        b'{"actions":[{"key":"k","version":0,"action":{"type":"back","params":' + nest_objects(deep - 3) + b"}}]}")
    add("batch", "a good item, then a bad one", "POST", batch, auth, j({"actions": [tap, tapped(key="bi-2", version=1, at="soon")]}))
    add("batch", "batch without a token", "POST", batch, [], j({"actions": [tap]}), expect=(401,))
    add("batch", "batch with a wrong token", "POST", batch, [("Authorization", "Bearer " + "A" * 43)], j({"actions": [tap]}), expect=(401,))
    add("batch", "batch with another session's token", "POST", batch, home_auth, j({"actions": [tap]}), expect=(401,))
    add("batch", "batch with the admin token", "POST", batch, adm, j({"actions": [tap]}), expect=(401,))
    add("batch", "batch on an unknown session", "POST", "/v1/sessions/s_AAAAAAAAAAAAAAAAAAAAAA/actions/batch", auth,
        j({"actions": [tap]}), expect=(404,))
    add("batch", "batch on a session id of 65 characters", "POST", "/v1/sessions/" + "s" * 65 + "/actions/batch", auth,
        j({"actions": [tap]}), expect=(404,))
    for method in ["GET", "PUT", "DELETE", "PATCH"]:
        add("batch", f"{method} on the batch route", method, batch, auth, j({"actions": [tap]}) if method in ("PUT", "PATCH") else None,
            expect=(405,))
    add("batch", "batch over the body limit", "POST", batch, auth,
        j({"actions": [tapped(key=f"k{i}", version=i, action={"type": "back", "params": {"p": "x" * 60000}}) for i in range(20)]}),
        expect=(413,))

    # --- bodies over the 1 MiB limit
    over = MAX_BODY + 1
    add("body-limit", "Content-Length over the limit, no body sent", "POST", sessions, [("Content-Length", str(over))], b"",
        expect=(413,))
    cases.append(Case("body-limit", "Content-Length over the limit, part of the body sent",
                      raw=[build_request("POST", actions, auth + [("Content-Length", str(4 * MAX_BODY))], b""),
                           b"[" * 65536], expect=(413,)))
    add("body-limit", "a 1 MiB + 1 body sent whole", "POST", sessions, [], b" " * over, expect=(413,))
    chunk = b"%x\r\n" % 65536 + b"a" * 65536 + b"\r\n"
    chunks = [chunk] * (MAX_BODY // 65536 + 2) + [b"0\r\n\r\n"]
    cases.append(Case("body-limit", "chunked body over the limit",
                      raw=[build_request("POST", sessions, [("Transfer-Encoding", "chunked")], b"")] + chunks, expect=(413,)))
    cases.append(Case("body-limit", "chunked body over the limit on an admin route",
                      raw=[build_request("PUT", flow, adm + [("Transfer-Encoding", "chunked")], b"")] + chunks, expect=(413,)))
    add("body-limit", "Expect: 100-continue with a Content-Length over the limit", "POST", sessions,
        [("Expect", "100-continue"), ("Content-Length", str(over))], b"", expect=(413,))
    add("body-limit", "exactly 1 MiB of whitespace", "POST", sessions, [], b" " * MAX_BODY)
    # libmicrohttpd 0.9.75 checks Content-Length before FlowStack sees the request; its page even
    # repeats its status line and headers (http.client reads the second copy as the body).
    add("body-limit", "Content-Length of 40 digits", "POST", sessions, [("Content-Length", forty.decode())], b"",
        expect=(413,), http_layer="libmicrohttpd rejects a Content-Length it cannot hold, with its own page")
    add("body-limit", "negative Content-Length", "POST", sessions, [("Content-Length", "-1")], b"",
        http_layer="libmicrohttpd rejects a malformed Content-Length, with its own page")
    add("body-limit", "two different Content-Lengths", "POST", sessions, [("Content-Length", "2"), ("Content-Length", "14")],
        b'{"userId":"a"}')
    add("body-limit", "Transfer-Encoding and Content-Length", "POST", sessions,
        [("Transfer-Encoding", "chunked"), ("Content-Length", "14")], b'e\r\n{"userId":"a"}\r\n0\r\n\r\n')
    add("body-limit", "unknown Transfer-Encoding", "POST", sessions, [("Transfer-Encoding", "gzip")], b'{"userId":"a"}')
    add("body-limit", "gzip then chunked Transfer-Encoding", "POST", sessions, [("Transfer-Encoding", "gzip, chunked")],
        b'e\r\n{"userId":"a"}\r\n0\r\n\r\n')
    add("body-limit", "malformed chunk size", "POST", sessions, [("Transfer-Encoding", "chunked")], b"zz\r\nab\r\n0\r\n\r\n",
        http_layer="libmicrohttpd decodes chunked bodies and answers a malformed chunk itself")

    # --- client keys (admin) and the guards of session creation
    keys = "/v1/client-keys"
    for name, body in [("not an object", b"[]"), ("no name", b"{}"), ("empty name", j({"name": ""})),
                       ("name not a string", j({"name": 5})), ("name of 101 bytes", j({"name": "n" * 101})),
                       ("control character in the name", j({"name": "a\u0001b"})), ("unknown field", j({"name": "x", "scope": "all"})),
                       ("invalid JSON", b'{"name":')]:
        add("client-keys", f"create: {name}", "POST", keys, adm, body, expect=(400,))
    add("client-keys", "create without the admin token", "POST", keys, [], j({"name": "x"}), expect=(401,))
    add("client-keys", "create with a session token", "POST", keys, auth, j({"name": "x"}), expect=(401,))
    add("client-keys", "list with a session token", "GET", keys, auth, expect=(401,))
    add("client-keys", "revoke an unknown key", "DELETE", f"{keys}/ck_unknown", adm, expect=(404,))
    add("client-keys", "revoke a key id of 300 characters", "DELETE", f"{keys}/" + "k" * 300, adm, expect=(404,))
    add("client-keys", "revoke without the admin token", "DELETE", f"{keys}/ck_unknown", [], expect=(401,))
    for name, value in [("unknown key", "fsk_unknown"), ("empty", ""), ("not a key at all", "letmein"),
                        ("4,000 characters", "fsk_" + "k" * 3996)]:
        add("client-keys", f"session with X-API-Key {name}", "POST", sessions, [("X-API-Key", value)], j({"userId": "a"}),
            expect=(401,))
    add("client-keys", "session with a made-up key as Bearer", "POST", sessions, [("Authorization", "Bearer fsk_made-up")],
        j({"userId": "a"}), expect=(401,))
    add("client-keys", "userHash not a string", "POST", sessions, [], j({"userId": "a", "userHash": 5}), expect=(400,))
    add("client-keys", "userHash of 129 characters", "POST", sessions, [], j({"userId": "a", "userHash": "0" * 129}), expect=(400,))

    # --- admin keys (named, with a role): bad requests, credentials that are not live keys, roles too low
    admin_keys, reader = "/v1/admin-keys", [("Authorization", "Bearer " + ctx["read_key"])]
    for name, body in [("not an object", b"[]"), ("no role", j({"name": "x"})), ("no name", j({"role": "read"})),
                       ("an unknown role", j({"name": "x", "role": "owner"})), ("role in capitals", j({"name": "x", "role": "READ"})),
                       ("role not a string", j({"name": "x", "role": ["read"]})), ("name of 101 characters", j({"name": "n" * 101, "role": "read"})),
                       ("control character in the name", j({"name": "a\u0001b", "role": "read"})),
                       ("unknown field", j({"name": "x", "role": "read", "scope": "all"})), ("invalid JSON", b'{"name":')]:
        add("admin-keys", f"create: {name}", "POST", admin_keys, adm, body, expect=(400,))
    add("admin-keys", "create a second live key of a name", "POST", admin_keys, adm, j({"name": "badinput-read", "role": "edit"}), expect=(409,))
    for name, headers in [("no credential", []), ("a session token", auth), ("a client key", [("Authorization", "Bearer " + ctx["client_key"])]),
                          ("a made-up admin key", [("Authorization", "Bearer fsa_made-up")]),
                          ("an admin key of 4,000 characters", [("Authorization", "Bearer fsa_" + "k" * 3996)])]:
        add("admin-keys", f"list with {name}", "GET", admin_keys, headers, expect=(401,))
        add("admin-keys", f"read flows with {name}", "GET", "/v1/flows", headers, expect=(401,))
    add("admin-keys", "create with a read key", "POST", admin_keys, reader, j({"name": "x", "role": "admin"}), expect=(403,))
    add("admin-keys", "list with a read key", "GET", admin_keys, reader, expect=(403,))
    add("admin-keys", "a flag PUT with a read key", "PUT", "/v1/flags/bi-split", reader, j({"variants": {"on": True}, "defaultVariant": "on"}),
        expect=(403,))
    add("admin-keys", "activate with a read key", "POST", "/v1/flows/onboarding/versions/1/activate", reader, expect=(403,))
    add("admin-keys", "revoke an unknown key", "DELETE", f"{admin_keys}/ak_unknown", adm, expect=(404,))
    add("admin-keys", "revoke a key id of 300 characters", "DELETE", f"{admin_keys}/" + "k" * 300, adm, expect=(404,))

    # --- OFREP (client keys; the protocol's error bodies)
    ofrep_one, ofrep_all = "/ofrep/v1/evaluate/flags/eu-face-scan", "/ofrep/v1/evaluate/flags"
    client = [("X-API-Key", ctx["client_key"])]
    context = j({"context": {"targetingKey": "a"}})
    for path in [ofrep_one, ofrep_all]:
        for name, headers in [("no key", []), ("an unknown key", [("X-API-Key", "fsk_unknown")]), ("a session token", auth),
                              ("the admin token", adm), ("a key of 4,000 characters", [("X-API-Key", "fsk_" + "k" * 3996)])]:
            add("ofrep", f"{path} with {name}", "POST", path, headers, context, expect=(401,), ofrep=True)
        for name, body in [("no body", None), ("invalid JSON", b'{"context":'), ("not an object", b"[]"), ("a string", b'"x"'),
                           ("invalid UTF-8", b'{"context":{"targetingKey":"\xff"}}'),
                           ("nesting over the limit", b'{"context":' + nest_objects(MAX_DEPTH + 2) + b"}"),
                           ("no context", b"{}"), ("context null", j({"context": None})), ("context an array", j({"context": [1]})),
                           ("targetingKey a number", j({"context": {"targetingKey": 5}})),
                           ("targetingKey an object", j({"context": {"targetingKey": {"id": "a"}}}))]:
            add("ofrep", f"{path}: {name}", "POST", path, client, body, ofrep=True)
    for name, key in [("an unknown flag", "no-such-flag"), ("an unknown experiment", "experiment:none"),
                      ("a key with an encoded slash", "a%2Fb"), ("a key of 2,000 characters", "k" * 2000), ("a bare prefix", "experiment:")]:
        add("ofrep", f"single: {name}", "POST", f"/ofrep/v1/evaluate/flags/{key}", client, context, expect=(404,), ofrep=True)
    add("ofrep", "single: a split on the user id without one", "POST", "/ofrep/v1/evaluate/flags/bi-split", client,
        j({"context": {"country": "DE"}}), ofrep=True)
    add("ofrep", "single: a boolean hash attribute", "POST", "/ofrep/v1/evaluate/flags/bi-device", client,
        j({"context": {"targetingKey": "a", "deviceId": True}}), ofrep=True)

    # --- oversized and malformed headers (libmicrohttpd answers these itself)
    too_big = "a" * (HEADER_MEMORY + 1024)
    mhd_431 = "libmicrohttpd answers headers over the 16 KiB connection memory itself (431, or 414 for the request line)"
    add("headers", "one header over 16 KiB", "GET", "/healthz", [("X-Big", too_big)], expect=(431,), http_layer=mhd_431)
    add("headers", "40 headers of 1 KiB", "GET", "/healthz", [(f"X-H{i}", "b" * 1024) for i in range(40)],
        expect=(431,), http_layer=mhd_431)
    add("headers", "Authorization over 16 KiB", "GET", f"/v1/sessions/{s}", [("Authorization", "Bearer " + too_big)],
        expect=(431,), http_layer=mhd_431)
    add("headers", "request line over 16 KiB", "GET", "/v1/sessions/" + too_big, auth, expect=(414, 431), http_layer=mhd_431)
    mhd_400 = "libmicrohttpd rejects a request line or header it cannot parse before FlowStack sees the request"
    cases.append(Case("headers", "header line without a colon", raw=b"GET /healthz HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n",
                      http_layer=mhd_400))
    cases.append(Case("headers", "request line without a version", raw=b"GET /healthz\r\nHost: x\r\n\r\n", http_layer=mhd_400))
    cases.append(Case("headers", "request line that is not HTTP", raw=b"GARBAGE\r\n\r\n", expect=(),
                      http_layer="libmicrohttpd closes a connection whose first line is one word, without answering"))
    cases.append(Case("headers", "HTTP/2.0 on an HTTP/1 connection", raw=b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n",
                      expect=(505,), http_layer="libmicrohttpd answers an unsupported version itself with 505"))
    # --- flow tests (POST /v1/flows/{name}/versions/{n}/test) and the audit log (GET /v1/audit)
    test = "/v1/flows/onboarding/versions/1/test"
    scenario = {"name": "s", "steps": [{"action": {"type": "onboarding.showSecond"}}]}
    add("invalid-json", "flow test: unclosed object", "POST", test, adm, b'{"scenarios":[')
    add("invalid-json", "flow test: empty body", "POST", test, adm, b"")
    add("utf8", "flow test name with 0xFF", "POST", test, adm, b'{"scenarios":[{"name":"a\xff","steps":[]}]}')
    for name, body in [("body as array", []), ("scenarios as object", {"scenarios": {}}), ("no scenarios", {}),
                       ("scenarios empty", {"scenarios": []}), ("scenario without name", {"scenarios": [{"steps": []}]}),
                       ("scenario name over 200 bytes", {"scenarios": [dict(scenario, name="n" * 201)]}),
                       ("userId as number", {"scenarios": [dict(scenario, context={"userId": 5})]}),
                       ("trait as number", {"scenarios": [dict(scenario, context={"traits": {"t": 1}})]}),
                       ("link as number", {"scenarios": [dict(scenario, start={"link": 5})]}),
                       ("step action without type", {"scenarios": [dict(scenario, steps=[{"action": {}}])]}),
                       ("step action from as number", {"scenarios": [dict(scenario, steps=[{"action": {"type": "back", "from": 3}}])]}),
                       ("expect transition unknown", {"scenarios": [dict(scenario, steps=[{"action": {"type": "back"}, "expect": {"transition": "fly"}}])]}),
                       ("expect screens as string", {"scenarios": [dict(scenario, steps=[{"action": {"type": "back"}, "expect": {"screens": "a"}}])]}),
                       ("expect error with transition", {"scenarios": [dict(scenario, steps=[{"action": {"type": "back"}, "expect": {"error": "refused", "transition": "pop"}}])]}),
                       ("1,001 steps", {"scenarios": [dict(scenario, steps=[{"action": {"type": "back"}}] * 1001)]}),
                       ("11 scenarios of 1,000 steps", {"scenarios": [dict(scenario, steps=[{"action": {"type": "back"}}] * 1000)] * 11})]:
        add("types", f"flow test: {name}", "POST", test, adm, j(body), expect=(422,))
    add("unknown-fields", "flow test scenario with an unknown field", "POST", test, adm,
        j({"scenarios": [dict(scenario, setup=[])]}), expect=(422,))
    add("unknown-fields", "flow test expect with an unknown field", "POST", test, adm,
        j({"scenarios": [dict(scenario, steps=[{"action": {"type": "back"}, "expect": {"topp": "a"}}])]}), expect=(422,))
    add("depth", f"flow test action params {deep} deep", "POST", test, adm,
        b'{"scenarios":[{"name":"s","steps":[{"action":{"type":"back","params":' + nest_objects(deep - 5) + b"}}]}]}")
    add("size", "flow test scenario name over 64 KiB", "POST", test, adm, j({"scenarios": [dict(scenario, name=huge)]}))
    for version in ["0", "abc", "1e3", forty.decode()]:
        add("ids", f"flow test of version {version}", "POST", f"/v1/flows/onboarding/versions/{version}/test", adm, j({"scenarios": [scenario]}))
    add("ids", "flow test of a missing version", "POST", "/v1/flows/onboarding/versions/999/test", adm, j({"scenarios": [scenario]}),
        expect=(404,))
    add("ids", "flow test of an unknown flow", "POST", "/v1/flows/no-such-flow/versions/1/test", adm, j({"scenarios": [scenario]}),
        expect=(404,))
    for query in ["after=-1", "after=abc", "after=1e3", "limit=0", "limit=1001", f"limit={forty.decode()}", "limit=%FF"]:
        add("paths", f"audit log {query}", "GET", f"/v1/audit?{query}", adm)
    for method, path in [("GET", test), ("DELETE", "/v1/audit"), ("POST", "/v1/audit")]:
        add("methods", f"{method} {path}", method, path, adm, expect=(405,))
    add("tokens", "audit log without a token", "GET", "/v1/audit", [], expect=(401,))
    add("tokens", "audit log with a session token", "GET", "/v1/audit", auth, expect=(401,))
    add("tokens", "flow test without a token", "POST", test, [], j({"scenarios": [scenario]}), expect=(401,))

    # --- a session's client (what the app build renders), in sessions, flow tests and link resolve
    for kind, value in [("string", "ios"), ("number", 2), ("array", ["ios"]), ("bool", True)]:
        add("types", f"session client as {kind}", "POST", sessions, body=j({"userId": "a", "client": value}))
    for field in ["platform", "appVersion"]:
        for kind, value in [("number", 2), ("array", ["x"]), ("object", {}), ("bool", False), ("empty", ""),
                            ("over 64 bytes", "v" * 65), ("with a quote", 'a"b'), ("with a backslash", "a\\b"),
                            ("with a control character", "a\u0001b"), ("non-ASCII", "\u00e9")]:
            add("types", f"session client {field} {kind}", "POST", sessions, body=j({"userId": "a", "client": {field: value}}))
    for kind, value in [("string", "home.first"), ("number", 1), ("object", {"home.first": True})]:
        add("types", f"session client features as {kind}", "POST", sessions, body=j({"userId": "a", "client": {"features": value}}))
    for kind, value in [("number", 1), ("null", None), ("empty string", ""), ("array", ["a"]), ("object", {}),
                        ("over 200 bytes", "f" * 201)]:
        add("types", f"session client feature as {kind}", "POST", sessions,
            body=j({"userId": "a", "client": {"features": ["home.first", value]}}))
    add("types", "session client with 1,001 features", "POST", sessions,
        body=j({"userId": "a", "client": {"features": [f"f{i}" for i in range(1001)]}}))
    add("size", "session client with 100,000 features", "POST", sessions,
        body=j({"userId": "a", "client": {"features": [f"f{i}" for i in range(100000)]}}), expect=(400, 413))
    add("depth", f"session client features {deep} deep", "POST", sessions,
        body=b'{"userId":"a","client":{"features":' + nest(deep - 3) + b"}}")
    add("unknown-fields", "session client with an unknown field", "POST", sessions, body=j({"userId": "a", "client": {"os": "ios"}}))
    add("unknown-fields", "session client field with a near miss", "POST", sessions, body=j({"userId": "a", "client": {"feature": []}}))
    add("utf8", "session client platform with 0xFF", "POST", sessions, body=b'{"userId":"a","client":{"platform":"\xff"}}')
    add("utf8", "session client feature with 0xFE", "POST", sessions, body=b'{"userId":"a","client":{"features":["a\xfe"]}}')
    add("capabilities", "session for a client that renders nothing", "POST", sessions,
        body=j({"userId": "a", "client": {"features": []}}), expect=(422,))
    add("capabilities", "session for a client that renders one screen", "POST", sessions,
        body=j({"userId": "a", "client": {"platform": "ios", "appVersion": "0.1", "features": ["home.first"]}}), expect=(422,))
    for name, client in [("as string", "ios"), ("features as string", {"features": "a"}), ("feature as number", {"features": [1]}),
                         ("with an unknown field", {"os": "ios"}), ("platform over 64 bytes", {"platform": "p" * 65})]:
        add("types", f"flow test client {name}", "POST", test, adm, j({"scenarios": [dict(scenario, client=client)]}), expect=(422,))
    resolve = "/v1/links/resolve?uri=/home&userId=bi-resolve"
    for name, query in [("platform over 64 bytes", "client.platform=" + "p" * 65), ("empty platform", "client.platform="),
                        ("appVersion with a quote", "client.appVersion=%22"), ("an unknown client parameter", "client.os=ios"),
                        ("a feature over 200 bytes", "client.features=" + "f" * 201),
                        ("1,001 features", "client.features=" + ",".join(f"f{i}" for i in range(1001)))]:
        add("types", f"link resolve with {name}", "GET", f"{resolve}&{query}", adm)
    add("capabilities", "link resolve for a client that renders nothing", "GET", f"{resolve}&client.features=", adm, expect=(422,))
    for method, path in [("GET", "/v1/users/a%00b"), ("DELETE", "/v1/users/a%00b/onboarding"), ("DELETE", "/v1/client-keys/a%00b"),
                         ("GET", "/v1/users/a%0Ab"), ("DELETE", "/v1/client-keys/k%0A")]:
        add("ids", f"{method} {path} (a control character in a path id)", method, path, adm, expect=(404,))
    # A NUL or another control character in a user id never reaches the database (PostgreSQL
    # refuses a NUL in text, which answered 503 before).
    for name, user in [("a NUL", "a%00b"), ("a newline", "a%0Ab"), ("DEL", "a%7F"), ("129 bytes", "u" * 129), ("empty", "")]:
        add("ids", f"link resolve for a user id with {name}", "GET", f"/v1/links/resolve?uri=/home&userId={user}", adm, expect=(400,))
    # Erasure and export of a user: an id no session could have is 400, before any look-up.
    for name, user in [("a NUL", "a%00b"), ("a newline", "a%0Ab"), ("DEL", "a%7F"), ("129 characters", "u" * 129)]:
        add("ids", f"erase a user id with {name}", "DELETE", f"/v1/users/{user}", adm, expect=(400,))
        add("ids", f"export a user id with {name}", "GET", f"/v1/users/{user}/export", adm, expect=(400,))
    add("ids", "export an unknown user", "GET", "/v1/users/nobody-at-all/export", adm, expect=(404,))
    add("tokens", "erase a user without a token", "DELETE", "/v1/users/bi-ada", [], expect=(401,))
    add("tokens", "export a user with a session token", "GET", "/v1/users/bi-ada/export", auth, expect=(401,))
    return cases


# ---------------------------------------------------------------------------------------------
# Checks

def problem_failure(case, answer):
    """Why `answer` is not what `case` expects, or None."""
    if not case.expect:
        return None if answer.closed else "expected the connection closed without an answer"
    if answer.error:
        return "no answer"
    if answer.status not in case.expect:
        return f"status {answer.status}, expected {'/'.join(map(str, case.expect))}"
    text = answer.body.decode("utf-8", "replace")
    if case.forbid and re.search(case.forbid, text):
        return f"the answer shows {case.forbid!r}"
    for pattern in LEAKS:
        if re.search(pattern, text):
            return f"the answer shows an internal detail ({pattern})"
    if case.http_layer:
        return None
    if case.ofrep:
        return ofrep_failure(answer)
    return problem_document_failure(answer.status, answer.header("Content-Type"), answer.body, head=case.head)


def ofrep_failure(answer):
    """Why an OFREP error answer is not what the protocol says, or None: 401 has no body; 400 and
    404 are `application/json` `{key?, errorCode, errorDetails}`."""
    if answer.status == 401:
        return None if not answer.body else f"a 401 with a body: {answer.body[:100]!r}"
    content_type = (answer.header("Content-Type") or "").split(";")[0].strip()
    if content_type != "application/json":
        return f"Content-Type {answer.header('Content-Type')!r}, expected application/json"
    try:
        document = json.loads(answer.body)
    except ValueError as error:
        return f"the body is not JSON ({error})"
    if not isinstance(document, dict) or not isinstance(document.get("errorCode"), str) or not isinstance(document.get("errorDetails"), str):
        return "not an OFREP error {errorCode, errorDetails}"
    wanted = {400: {"PARSE_ERROR", "INVALID_CONTEXT", "TARGETING_KEY_MISSING", "GENERAL"}, 404: {"FLAG_NOT_FOUND"}}.get(answer.status, set())
    if document["errorCode"] not in wanted:
        return f"errorCode {document['errorCode']!r} with status {answer.status}"
    return None


def post_json(port, path, document, headers=()):
    answer = request(port, "POST", path, list(headers), j(document))
    if answer.status not in (200, 201):
        raise RuntimeError(f"set-up request {path} failed: {answer.summary()}")
    return json.loads(answer.body)


class EventStream:
    """An event stream read from a raw socket: the answer's status and headers, then the `id` of
    each `event: state` in its chunked body."""

    def __init__(self, port, path, headers):
        self.sock = socket.create_connection((HOST, port), timeout=CASE_TIMEOUT)
        self.sock.sendall(build_request("GET", path, list(headers), None))
        self.status, self.headers, self.error = None, {}, None
        self.raw, self.body, self.events = bytearray(), bytearray(), bytearray()
        self._read_head()

    def _receive(self, deadline):
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return True
        except OSError as error:
            self.error = repr(error)
            return False
        if not data:
            self.error = self.error or "closed by the server"
            return False
        self.raw += data
        return True

    def _read_head(self):
        deadline = time.monotonic() + CASE_TIMEOUT
        while b"\r\n\r\n" not in self.raw and time.monotonic() < deadline:
            if not self._receive(deadline):
                break
        end = self.raw.find(b"\r\n\r\n")
        if end < 0:
            self.error = self.error or "no answer"
            return
        lines = bytes(self.raw[:end]).decode("latin-1").split("\r\n")
        del self.raw[:end + 4]
        self.status = int(lines[0].split()[1])
        self.headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}

    def state_events(self, wait, first_only=False):
        """The versions of the state events that come within `wait` seconds (at the first one
        with `first_only`)."""
        versions = []
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            while True:  # chunks -> event text
                line_end = self.raw.find(b"\r\n")
                if line_end < 0:
                    break
                size = int(bytes(self.raw[:line_end]).split(b";")[0] or b"0", 16)
                if len(self.raw) < line_end + 4 + size:
                    break
                self.body += self.raw[line_end + 2:line_end + 2 + size]
                del self.raw[:line_end + 4 + size]
            while (end := self.body.find(b"\n\n")) >= 0:
                found = re.match(rb"id: (\d+)\nevent: state\ndata: \{", self.body[:end])
                self.events += self.body[:end + 2]
                del self.body[:end + 2]
                if found:
                    versions.append(int(found.group(1)))
            if versions and first_only:
                break
            if not self._receive(deadline):
                break
        return versions

    def summary(self):
        return (f"status {self.status} Content-Type={self.headers.get('content-type')!r} error={self.error} "
                f"events={bytes(self.events[:200])!r}")

    def close(self):
        self.sock.close()


def stream_checks(port, ctx, tally):
    """Streams that must open: a Last-Event-ID that is no version counts as none, one equal to
    the version sends nothing until the next, HEAD answers at once. bi-bob's session is at 2."""
    home, home_auth = ctx["s2"], [("Authorization", "Bearer " + ctx["t2"])]
    for name, value in [("letters", "abc"), ("empty", ""), ("a minus alone", "-"), ("a fraction", "1.5"), ("hexadecimal", "0x2"),
                        ("23 digits", "9" * 23), ("an exponent", "2e0"), ("two numbers", "2 2"), ("a negative", "-1"),
                        ("an older version", "1"), ("a future version", "99"), ("non-ASCII digits", "\uff12".encode()),
                        ("invalid UTF-8", b"\xff\xfe"), ("1 KiB", "2" + " " * 1022 + "x")]:
        stream = EventStream(port, f"/v1/sessions/{home}/events", home_auth + [("Last-Event-ID", value)])
        try:
            versions = stream.state_events(wait=3, first_only=True) if stream.status == 200 else []
            failure = None
            if stream.status != 200 or not (stream.headers.get("content-type") or "").startswith("text/event-stream"):
                failure = "the stream did not open"
            elif versions != [2]:
                failure = f"first state events {versions}, expected the current version 2"
            tally.check(f"[streams] Last-Event-ID {name}: the stream opens with the current state", failure, stream.summary())
        finally:
            stream.close()
    # bi-eve's scratch session (not compared): a client that has the current version gets the next one only.
    scratch, scratch_auth = ctx["s5"], [("Authorization", "Bearer " + ctx["t5"])]
    current = json.loads(request(port, "GET", f"/v1/sessions/{scratch}", scratch_auth).body)["version"]
    stream = EventStream(port, f"/v1/sessions/{scratch}/events", scratch_auth + [("Last-Event-ID", str(current))])
    try:
        early = stream.state_events(wait=0.5)
        tally.check("[streams] Last-Event-ID of the current version: nothing until the next",
                    None if stream.status == 200 and early == [] else f"state events {early}", stream.summary())
        moved = request(port, "POST", f"/v1/sessions/{scratch}/actions", scratch_auth, j({"type": "onboarding.returnToFirst"}))
        later = stream.state_events(wait=3, first_only=True)
        tally.check("[streams] ... then the next version",
                    None if moved.status == 200 and later == [current + 1] else f"action {moved.status}, state events {later}",
                    stream.summary())
    finally:
        stream.close()
    answer = exchange(port, build_request("HEAD", f"/v1/sessions/{home}/events", home_auth, None), method="HEAD", timeout=3)
    tally.check("[streams] HEAD with the token: 200, the stream's headers, at once",
                None if answer.status == 200 and (answer.header("Content-Type") or "").startswith("text/event-stream")
                and answer.body == b"" else "not so", answer.summary())


def set_up(server):
    """Sessions in a few states, and a flag, a flow and an experiment for the admin cases to aim at."""
    port = server.port
    ctx = {"admin": server.admin_token}
    made = []
    for user, attributes in [("bi-ada", {}), ("bi-bob", {"platform": "ios"}), ("bi-cy", {"country": "DE"}), ("bi-dee", {})]:
        created = post_json(port, "/v1/sessions", {"userId": user, "attributes": attributes, "traits": {"horizontalSizeClass": "compact"}})
        made.append((created["session"]["id"], created["session"]["token"]))
    for number, (session_id, token) in enumerate(made, start=1):
        ctx[f"s{number}"], ctx[f"t{number}"] = session_id, token
    auth = lambda token: [("Authorization", "Bearer " + token)]
    # bi-bob goes home (version 2); bi-dee stops in a pending interactive back to the first screen.
    post_json(port, f"/v1/sessions/{ctx['s2']}/actions", {"type": "onboarding.showSecond"}, auth(ctx["t2"]))
    post_json(port, f"/v1/sessions/{ctx['s2']}/actions", {"type": "onboarding.completed"}, auth(ctx["t2"]))
    post_json(port, f"/v1/sessions/{ctx['s4']}/actions", {"type": "onboarding.showSecond"}, auth(ctx["t4"]))
    post_json(port, f"/v1/sessions/{ctx['s4']}/actions", {"type": "onboarding.returnToFirst", "interactive": True}, auth(ctx["t4"]))
    # Stream tickets: one spent on a stream opened here, one of bi-bob's session (bi-ada's route
    # must refuse it), one that cases present as a bearer token, one for an unknown session.
    for name, number in [("ticket_used", 1), ("ticket_home", 2), ("ticket_bearer", 1), ("ticket_other", 1)]:
        made = post_json(port, f"/v1/sessions/{ctx[f's{number}']}/events/ticket", {}, auth(ctx[f"t{number}"]))
        ctx[name] = made["ticket"]
    opened = EventStream(port, f"/v1/sessions/{ctx['s1']}/events?ticket={ctx['ticket_used']}", [])
    try:
        if opened.status != 200 or opened.state_events(wait=5, first_only=True) != [0]:
            raise RuntimeError(f"set-up: a fresh ticket did not open a stream: {opened.status} {opened.summary()}")
    finally:
        opened.close()
    # A client key for the OFREP cases; a flag split on the user id (to ask without one) and one
    # split on a device attribute (to send one of the wrong type).
    ctx["client_key"] = post_json(port, "/v1/client-keys", {"name": "badinput"}, auth(ctx["admin"]))["key"]
    # An admin key that may only read, for the cases of a role too low.
    ctx["read_key"] = post_json(port, "/v1/admin-keys", {"name": "badinput-read", "role": "read"}, auth(ctx["admin"]))["key"]
    split = {"variants": {"on": True, "off": False}, "defaultVariant": "off", "split": [{"variant": "on", "weight": 1}]}
    for key, flag in [("bi-split", split), ("bi-device", dict(split, hashAttribute="deviceId"))]:
        answer = request(port, "PUT", f"/v1/flags/{key}", auth(ctx["admin"]), j(flag))
        if answer.status not in (200, 201):
            raise RuntimeError(f"set-up: PUT /v1/flags/{key}: {answer.summary()}")
    # An experiment for the report's query cases (the sessions made after it are in it).
    answer = request(port, "PUT", "/v1/experiments/bi-report", auth(ctx["admin"]),
                     j({"variants": [{"key": "a", "weight": 0.5}, {"key": "b", "weight": 0.5}]}))
    if answer.status not in (200, 201):
        raise RuntimeError(f"set-up: PUT /v1/experiments/bi-report: {answer.summary()}")
    compared = [(ctx[f"s{n}"], ctx[f"t{n}"]) for n in range(1, 5)]
    # A scratch session, not compared: it has used an Idempotency-Key, for the case that reuses it.
    created = post_json(port, "/v1/sessions", {"userId": "bi-eve"})
    ctx["s5"], ctx["t5"] = created["session"]["id"], created["session"]["token"]
    post_json(port, f"/v1/sessions/{ctx['s5']}/actions", {"type": "onboarding.showSecond"},
              auth(ctx["t5"]) + [("Idempotency-Key", "bi-key-1")])
    # A session deleted after it made a stream ticket (deleting it deletes the ticket).
    created = post_json(port, "/v1/sessions", {"userId": "bi-gone"})
    ctx["gone"], gone_token = created["session"]["id"], created["session"]["token"]
    ctx["ticket_gone"] = post_json(port, f"/v1/sessions/{ctx['gone']}/events/ticket", {}, auth(gone_token))["ticket"]
    if request(port, "DELETE", f"/v1/sessions/{ctx['gone']}", auth(gone_token), None).status != 204:
        raise RuntimeError("set-up: the session to delete was not deleted")
    return ctx, compared


def read_states(port, sessions):
    states = {}
    for session_id, token in sessions:
        answer = request(port, "GET", f"/v1/sessions/{session_id}", [("Authorization", "Bearer " + token)])
        states[session_id] = (answer.status, answer.header("ETag"), answer.body)
    return states


def short(state):
    status, etag, body = state
    return f"{status} ETag={etag} {body[:300].decode('utf-8', 'replace')!r}"


def healthy(port, timeout=2.0):
    answer = exchange(port, build_request("GET", "/healthz", [], None), timeout=timeout)
    return None if answer.status == 200 and b'"status":"ok"' in answer.body else answer.summary()


def main():
    binary = binary_argument("badinput.py")
    work = tempfile.mkdtemp(prefix="flowstack-badinput-")
    pg = None
    if database_kind() == "postgresql":
        from harness.postgres import PostgresServer
        try:
            pg = PostgresServer().start()
        except Exception as error:
            shutil.rmtree(work, ignore_errors=True)
            print(f"FAIL PostgreSQL did not start: {error}", flush=True)
            print("badinput: 0 passed, 1 failed", flush=True)
            return 1
        LEAKS.extend(PG_LEAKS)
    # Every case is judged on its own answer: the default limit of failed admin checks (its own
    # tests are FailedTokenLimitTests) would answer the later wrong admin tokens 429.
    server = FlowStackProcess(binary, work, db=pg.url if pg else None, extra_args=["--admin-failure-rate", "off"])
    tally = Tally()
    started = time.monotonic()
    try:
        server.start()
        ctx, sessions = set_up(server)
        before = read_states(server.port, sessions)
        cases = corpus(ctx)
        groups = []
        for case in cases:
            if case.group not in groups:
                groups.append(case.group)
        print(f"badinput: {len(cases)} cases in {len(groups)} groups ({', '.join(groups)})", flush=True)
        names = set()
        for group in groups:
            for case in (c for c in cases if c.group == group):
                label = f"[{case.group}] {case.name}"
                assert label not in names, f"two cases are named {label}"
                names.add(label)
                answer = exchange(server.port, case.data(), method=case.method)
                tally.check(label, problem_failure(case, answer), answer.summary())
                if not server.alive():  # record the crash, then go on with a new process on the same database
                    tally.check(f"{label}: the server is still running", f"it exited with {server.stop()}",
                                server.stderr_text()[-2000:])
                    server.start()
            tally.check(f"/healthz after group {group}", healthy(server.port))
        stream_checks(server.port, ctx, tally)
        tally.check("/healthz after the stream checks", healthy(server.port))
        after = read_states(server.port, sessions)
        for session_id, _ in sessions:
            tally.check(f"session {session_id} reads back as before",
                        None if after[session_id] == before[session_id] and before[session_id][0] == 200 else "its state changed",
                        f"before {short(before[session_id])}\n     after  {short(after[session_id])}")
        errors = [line for line in server.stderr_text().splitlines() if "error" in line.lower()]
        tally.check("the server logged no errors", None if not errors else f"{len(errors)} error lines", "\n".join(errors[:5]))
        status = server.stop()
        tally.check("SIGTERM stops the server with status 0", None if status == 0 else f"status {status}")
        if pg is None:
            with sqlite3.connect(server.db) as connection:
                integrity = connection.execute("PRAGMA integrity_check").fetchall()
            connection.close()
            tally.check("PRAGMA integrity_check", None if integrity == [("ok",)] else repr(integrity))
        else:
            tally.check("pg_amcheck", pg.amcheck())
        server.start()
        restarted = read_states(server.port, sessions)
        for session_id, _ in sessions:
            tally.check(f"session {session_id} reads back as before after a restart",
                        None if restarted[session_id] == before[session_id] else "its state changed",
                        f"before {short(before[session_id])}\n     after  {short(restarted[session_id])}")
    except Exception as error:  # a failure of the harness itself still counts, and still cleans up
        tally.check("the run completed", f"{type(error).__name__}: {error}")
    finally:
        server.stop()
        if pg is not None:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    return tally.report("badinput", started)


if __name__ == "__main__":
    sys.exit(main())
