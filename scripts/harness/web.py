"""HTTP to the FlowStack under test, three ways, and the check of a problem answer.

    call(port, "POST", "/v1/sessions", {"userId": "u"})   # (status, parsed body or text); 0: no answer
    JSONServer(port, admin_token).call("GET", "/v1/flows") # (status, headers, parsed body), admin-ready
    Http().request(port, "GET", "/healthz")               # keeps one connection per port (a thread's own)
    problem_failure(status, content_type, body)            # None, or why it is not a problem document

Standard library only.
"""
import http.client
import json
import urllib.error
import urllib.request

HOST = "127.0.0.1"


def as_json(data):
    """The parsed JSON of `data`, or None when it is not JSON."""
    try:
        return json.loads(data)
    except (ValueError, TypeError):
        return None


def call(port, method, path, body=None, headers=None, timeout=10):
    """(status, parsed body or text); status 0 when the connection failed or timed out."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{HOST}:{port}{path}", data=data, method=method,
                                     headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        raw, status = error.read(), error.code
    except (OSError, urllib.error.URLError):
        return 0, None
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def post_json(connection, path, body, token=None, key=None):
    """POST `body` as JSON on a kept http.client connection (the benchmarks' fill scripts), with
    `key` as its Idempotency-Key when given: the parsed answer, or SystemExit naming the path and
    status when it is not 2xx."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    if key:
        headers["Idempotency-Key"] = key
    connection.request("POST", path, json.dumps(body), headers)
    response = connection.getresponse()
    data = response.read()
    if response.status >= 300:
        raise SystemExit(f"{path}: {response.status} {data[:200]!r}")
    return json.loads(data)


def status_of(port, path, timeout=2.0):
    """The status of GET `path`, or None when nothing answered (a new connection each time)."""
    try:
        connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
        connection.request("GET", path)
        status = connection.getresponse().status
        connection.close()
        return status
    except (OSError, http.client.HTTPException):
        return None


class JSONServer:
    """JSON over HTTP to the FlowStack under test: `call` answers (status, headers, parsed body)."""

    def __init__(self, port, admin_token):
        self.base = f"http://{HOST}:{port}"
        self.admin = {"Authorization": f"Bearer {admin_token}"}

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return response.status, dict(response.headers), json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = raw
            return error.code, dict(error.headers), parsed


class Http:
    """One thread's persistent connections, one per port."""

    def __init__(self, timeout=10.0):
        self.timeout = timeout
        self.connections = {}

    def request(self, port, method, path, body=None, headers=None, timeout=None):
        """(status or None, headers with lower-case names, body bytes or the error's text)."""
        connection = self.connections.pop(port, None) or \
            http.client.HTTPConnection(HOST, port, timeout=self.timeout if timeout is None else timeout)
        try:
            connection.request(method, path, body, headers or {})
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            return None, {}, f"{type(error).__name__}: {error}"
        if (response.getheader("Connection") or "").lower() == "close":
            connection.close()
        else:
            self.connections[port] = connection
        return response.status, {name.lower(): value for name, value in response.getheaders()}, data

    def close(self):
        for connection in self.connections.values():
            connection.close()
        self.connections.clear()


def read_action_log(fetch, sid, limit=1000, where=""):
    """Every entry of session `sid`'s action log, page by page (`?after=&limit=`, following
    `next`). `fetch(path)` answers (status, body bytes); a page that is not 200 raises
    RuntimeError (`where` says from which node, in its message)."""
    entries, after = [], 0
    while True:
        status, data = fetch(f"/v1/sessions/{sid}/actions?after={after}&limit={limit}")
        if status != 200:
            raise RuntimeError(f"GET /v1/sessions/{sid}/actions{where} answered {status}: {data[:200]!r}")
        page = json.loads(data)
        entries += page["actions"]
        if page.get("next") is None or not page["actions"]:
            return entries
        after = page["next"]


def problem_failure(status, content_type, body, code=None, head=False):
    """Why an answer is not an RFC 9457 problem the README promises, or None: Content-Type
    `application/problem+json`, a JSON object with string type, title and detail, and `status`
    equal to the answer's; with `code=`, that `code`. `head=True`: the Content-Type only (the
    answer to a HEAD has no body)."""
    if (content_type or "").split(";")[0].strip() != "application/problem+json":
        return f"Content-Type {content_type!r}, expected application/problem+json"
    if head:
        return None
    try:
        document = json.loads(body) if isinstance(body, (bytes, str)) else body
    except ValueError as error:
        return f"the body is not JSON ({error})"
    if not isinstance(document, dict):
        return "the body is not a JSON object"
    for member, kind in [("type", str), ("title", str), ("status", int), ("detail", str)]:
        if not isinstance(document.get(member), kind):
            return f"the problem has no {kind.__name__} {member!r}"
    if document["status"] != status:
        return f"the problem says status {document['status']} but the answer is {status}"
    if code is not None and document.get("code") != code:
        return f"the problem's code is {document.get('code')!r}, expected {code!r}"
    return None
