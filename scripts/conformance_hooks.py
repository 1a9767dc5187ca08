# schemathesis hooks for scripts/conformance.sh (SCHEMATHESIS_HOOKS=conformance_hooks).
#
# The session routes take the session's own token, which no configuration can hold: openapi.yaml's
# links from POST /v1/sessions give each later call the session's id and its
# `Authorization: Bearer <token>`. schemathesis counts a header a link filled in as *generated*
# auth, so its ignored_auth check would call every 2xx of a session route "auth not enforced".
# These hooks remember each token the server handed out and mark a call that carries the token of
# the very session it names as explicitly authenticated: ignored_auth then does its real work,
# calling again without the token and with a wrong one, and expects 401.
import schemathesis

tokens: dict[str, str] = {}


@schemathesis.hook
def after_call(context, case, response):
    if case.method == "POST" and case.operation.path == "/v1/sessions" and response.status_code == 201:
        session = response.json()["session"]
        tokens[session["id"]] = session["token"]


@schemathesis.hook
def before_call(context, case, **kwargs):
    if not case.operation.path.startswith("/v1/sessions/{id}"):
        return
    token = tokens.get((case.path_parameters or {}).get("id"))
    if token is not None and (case.headers or {}).get("Authorization") == f"Bearer {token}":
        case._has_explicit_auth = True  # what schemathesis sets for credentials it was given
