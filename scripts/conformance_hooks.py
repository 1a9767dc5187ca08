# schemathesis hooks for scripts/conformance.sh (SCHEMATHESIS_HOOKS=conformance_hooks).
#
# The session routes take the session's own token, which no configuration can hold: openapi.yaml's
# links from POST /v1/sessions give each later call the session's id and its
# `Authorization: Bearer <token>`. schemathesis counts a header a link filled in as *generated*
# auth, so its ignored_auth check would call every 2xx of a session route "auth not enforced".
# These hooks remember each token the server handed out and mark a call that carries the token of
# the very session it names as explicitly authenticated: ignored_auth then does its real work,
# calling again without the token and with a wrong one, and expects 401.
#
# And one mislabel: the coverage phase may build a case it calls positive (valid) around a header
# value it drew as negative for an earlier case (`If-Match: 0`, which the header's pattern
# forbids), and positive_data_acceptance then expects it accepted. A case whose header breaks its
# parameter's `pattern` is marked negative before it is sent, so the checks judge it as the
# invalid request it is (negative_data_rejection then expects the 4xx the server answers).
#
# Two more, each for one operation: POST /v1/releases is sent with the releaser's admin key
# (CONFORMANCE_RELEASER) instead of the admin token, so the admin token may approve the releases
# the run makes (no one approves a release they made); and after a DELETE /v1/sessions/{id} that
# deleted the session, ignored_auth's second call with a wrong token meets a session that is gone
# (404, as for any id that names none), which says nothing about auth: that failure is dropped.
import os
import re

import schemathesis
from schemathesis import GenerationMode

RELEASER = os.environ.get("CONFORMANCE_RELEASER")
ADMIN_TOKEN = os.environ.get("CONFORMANCE_ADMIN_TOKEN")
# The keys the run itself stands on (the releaser's admin key, the client key of the OFREP and
# GrowthBook routes), by id: the other phases draw ids from earlier answers (the key lists), and
# revoking these would turn every later call that uses them into a 401. Such a revocation is sent
# for an id that names no key instead (a 404, which the operation documents).
FIXTURES = {
    "/v1/admin-keys/{id}": os.environ.get("CONFORMANCE_RELEASER_ID"),
    "/v1/client-keys/{id}": os.environ.get("CONFORMANCE_CLIENT_KEY_ID"),
}

tokens: dict[str, str] = {}


@schemathesis.hook
def after_call(context, case, response):
    if case.method == "POST" and case.operation.path == "/v1/sessions" and response.status_code == 201:
        session = response.json()["session"]
        tokens[session["id"]] = session["token"]


def breaks_a_header_pattern(case) -> bool:
    headers = case.headers or {}
    for parameter in case.operation.headers:
        pattern = parameter.definition.get("schema", {}).get("pattern")
        value = headers.get(parameter.name)
        if pattern and isinstance(value, str) and not re.search(pattern, value):
            return True
    return False


@schemathesis.hook
def before_call(context, case, **kwargs):
    meta = case.meta
    if meta is not None and meta.generation.mode == GenerationMode.POSITIVE and breaks_a_header_pattern(case):
        meta.generation.mode = GenerationMode.NEGATIVE
    fixture = FIXTURES.get(case.operation.path)
    if fixture and case.method == "DELETE" and (case.path_parameters or {}).get("id") == fixture:
        case.path_parameters["id"] = "conformance-fixture-kept"
    if (RELEASER and case.method == "POST" and case.operation.path == "/v1/releases"
            and (case.headers or {}).get("Authorization") == f"Bearer {ADMIN_TOKEN}"):
        case.headers["Authorization"] = f"Bearer {RELEASER}"
    if not case.operation.path.startswith("/v1/sessions/{id}"):
        return
    token = tokens.get((case.path_parameters or {}).get("id"))
    if token is not None and (case.headers or {}).get("Authorization") == f"Bearer {token}":
        case._has_explicit_auth = True  # what schemathesis sets for credentials it was given


@schemathesis.hook
def filter_failure(context, failure, case, response):
    deleted = case.method == "DELETE" and case.operation.path == "/v1/sessions/{id}" and response.status_code in (200, 204)
    return not (deleted and failure.code == "ST401")
