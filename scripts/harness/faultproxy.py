"""An HTTP/1.1 proxy on loopback that delays every request and answer, and on demand breaks the
next requests the way a network, a load balancer or a crashed node does: a child process of the
check, told what to break through a control route of its own.

    proxy = FaultProxy(upstream_port, delay_ms=100)   # listening on proxy.port, 127.0.0.1 only
    proxy.fault("500-after", 3)       # the next 3 matching requests: forwarded, answer replaced by a 500
    proxy.state()                     # {"mode", "remaining", "match", "injected": {mode: n}}
    proxy.requests(reset=True)        # what went through: method, path, status, batch size, fault
    proxy.stop()

Modes, each for the next `count` requests whose "METHOD /path" matches `match` (by default the
two routes that commit taps, `POST /v1/sessions/{id}/actions` and `…/actions/batch`):

    500-before     answered 500 without forwarding: nothing was committed (the 500s alternate
                   between a proxy's HTML page and a problem document, `application/problem+json`)
    drop-before    the connection is closed without forwarding: nothing was committed
    500-after      forwarded (the server commits), its answer replaced by a 500 (as above)
    garbage-after  forwarded, its answer's body replaced by one that is not JSON (same status)
    drop-after     forwarded, then the connection is closed before any answer
    none           nothing is broken

Control routes, answered at once (no delay, never forwarded):
    POST /__fault {"mode", "count", "match"?}   sets the fault (count 0 or mode "none" clears it)
    GET  /__fault                               the fault left and how many were injected
    GET  /__requests, DELETE /__requests        what was proxied since the last reset (each request's
                                                method, path, fault, status sent, upstream's status,
                                                batch size, and `clientGone` when its client had
                                                closed before the answer: a kill lost it)

Why not harness.relay alone: it copies bytes and cannot tell where an answer starts and ends, and
a fault "after commit" needs exactly that (read the whole answer, then replace it or cut the
connection). This one reads each request and answer
(Content-Length or chunked), so it forwards one request at a time per connection, on a fresh
upstream connection each (no stale keep-alive to the server can cut a request the check did not
mean to cut). A `text/event-stream` answer is relayed as bytes (harness.relay's pipe) until either side closes.

Run as a file (`python3 faultproxy.py UPSTREAM_PORT [--delay-ms 100] [--port 0]`) it is the proxy
itself and prints `listening on PORT`. Standard library only; harness.relay is imported as a file of
this folder when this runs as a file; loopback only (it listens on and forwards to 127.0.0.1, nothing else).
"""
import asyncio
import json
import os
import re
import subprocess
import sys
import urllib.request

try:
    from harness.relay import HOST, pipe
except ImportError:  # run as a file: its folder is on the path, the package is not
    from relay import HOST, pipe

MODES = ("none", "500-before", "drop-before", "500-after", "garbage-after", "drop-after")
COMMITTING = r"^POST /v1/sessions/[^/]+/actions(/batch)?$"
PAGE_500 = (b"<html><head><title>500 Internal Server Error</title></head>"
            b"<body><h1>500 Internal Server Error</h1><p>upstream failed (injected by faultproxy)</p></body></html>")
PROBLEM_500 = json.dumps({"type": "about:blank", "title": "Internal Server Error", "status": 500,
                          "detail": "injected by faultproxy"}).encode()
GARBAGE = b"<html><body>Service temporarily rewritten by faultproxy: not JSON</body></html>"
MAX_HEAD = 64 * 1024


class Faults:
    """The fault armed for the next matching requests, and what went through."""

    def __init__(self):
        self.mode, self.remaining, self.match = "none", 0, re.compile(COMMITTING)
        self.injected = {}
        self.log = []

    def arm(self, document):
        mode = document.get("mode", "none")
        count = document.get("count", 1)
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
        if not isinstance(count, int) or count < 0:
            raise ValueError(f"count {count!r}: expected a whole number of requests, 0 or more")
        self.match = re.compile(document.get("match") or COMMITTING)
        self.mode, self.remaining = (mode, count) if mode != "none" and count > 0 else ("none", 0)

    def take(self, method, path):
        """The fault for this request (decrementing what is left), or None."""
        if self.remaining <= 0 or not self.match.search(f"{method} {path}"):
            return None
        self.remaining -= 1
        self.injected[self.mode] = self.injected.get(self.mode, 0) + 1
        mode = self.mode
        if self.remaining == 0:
            self.mode = "none"
        return mode

    def state(self):
        return {"mode": self.mode, "remaining": self.remaining, "match": self.match.pattern, "injected": dict(self.injected)}


def parse_head(head):
    """(start line words, {lower-case name: value}) of a request's or answer's head."""
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return lines[0].split(" ", 2), headers


async def read_body(reader, headers):
    """The body as it came (chunked framing kept), by Content-Length or chunked; b"" without either."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raw = b""
        while True:
            size_line = await reader.readuntil(b"\r\n")
            raw += size_line
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers, up to the empty line
                    line = await reader.readuntil(b"\r\n")
                    raw += line
                    if line == b"\r\n":
                        return raw
            raw += await reader.readexactly(size + 2)
    length = int(headers.get("content-length", "0") or "0")
    return await reader.readexactly(length) if length else b""


def answer(status, reason, body, content_type, extra=b""):
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n".encode()
            + extra + b"\r\n" + body)


def error_500(number):
    """The 500 of the `number`th injected fault: a proxy's HTML page, or every other time a problem
    document (as a server's own 500 would be), since neither may read as a refusal."""
    if number % 2:
        return answer(500, "Internal Server Error", PAGE_500, "text/html")
    return answer(500, "Internal Server Error", PROBLEM_500, "application/problem+json")


def replaced(head, body):
    """The upstream's answer with its status kept and its body replaced by one that is not JSON."""
    start = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
    return answer(int(start[1]), start[2] if len(start) > 2 else "", body, "text/html")


def batch_size(method, path, body):
    """How many taps a batch carries (None for any other request)."""
    if method != "POST" or not path.endswith("/actions/batch"):
        return None
    try:
        return len(json.loads(body)["actions"])
    except (ValueError, KeyError, TypeError):
        return None


def proxy_main(upstream_port, delay, listen_port):
    faults = Faults()

    async def control(method, path, body):
        if path == "/__fault" and method == "POST":
            try:
                faults.arm(json.loads(body or b"{}"))
            except (ValueError, TypeError, AttributeError) as error:
                return answer(400, "Bad Request", json.dumps({"error": str(error)}).encode(), "application/json")
            return answer(200, "OK", json.dumps(faults.state()).encode(), "application/json")
        if path == "/__fault" and method == "GET":
            return answer(200, "OK", json.dumps(faults.state()).encode(), "application/json")
        if path == "/__requests" and method in ("GET", "DELETE"):
            document = json.dumps(faults.log).encode()
            if method == "DELETE":
                faults.log = []
            return answer(200, "OK", document, "application/json")
        return answer(404, "Not Found", b'{"error": "no such control route"}', "application/json")

    async def handle(client_reader, client_writer):
        try:
            while True:
                try:
                    head = await client_reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
                    return
                (method, target, *_), headers = parse_head(head)
                path = target.split("?", 1)[0]
                arrived = round(asyncio.get_running_loop().time(), 3)
                try:
                    body = await read_body(client_reader, headers)
                except (asyncio.IncompleteReadError, OSError, ValueError):
                    # The head came and the body never did (the client gave up): recorded, as a
                    # client that sends half a request is worth seeing.
                    faults.log.append({"method": method, "path": path, "fault": None, "status": None, "upstream": None,
                                       "batch": None, "at": arrived, "incomplete": True,
                                       "contentLength": headers.get("content-length"), "expect": headers.get("expect"),
                                       "lasted": round(asyncio.get_running_loop().time() - arrived, 3)})
                    return
                if path.startswith("/__"):
                    client_writer.write(await control(method, path, body))
                    await client_writer.drain()
                    continue
                fault = faults.take(method, path)
                entry = {"method": method, "path": path, "fault": fault, "status": None, "upstream": None,
                         "batch": batch_size(method, path, body), "at": arrived}
                faults.log.append(entry)
                await asyncio.sleep(delay)  # the request's way to the server
                if fault == "drop-before":
                    return
                if fault == "500-before":
                    reply = error_500(faults.injected[fault])
                else:
                    try:
                        up_reader, up_writer = await asyncio.open_connection(HOST, upstream_port)
                    except OSError:
                        return  # the server is down: the client sees the connection cut
                    try:
                        up_writer.write(head + body)
                        await up_writer.drain()
                        up_head = await up_reader.readuntil(b"\r\n\r\n")
                        (_, status, *_), up_headers = parse_head(up_head)
                        entry["upstream"] = int(status)
                        if "text/event-stream" in up_headers.get("content-type", ""):
                            await asyncio.sleep(delay)
                            client_writer.write(up_head)
                            await asyncio.gather(pipe(up_reader, client_writer), pipe(client_reader, up_writer))
                            return
                        up_body = b"" if method == "HEAD" else await read_body(up_reader, up_headers)
                    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError, ValueError):
                        return  # the server cut it: so does the proxy
                    finally:
                        up_writer.close()
                    if fault == "drop-after":
                        return
                    if fault == "500-after":
                        reply = error_500(faults.injected[fault])
                    elif fault == "garbage-after":
                        reply = replaced(up_head, GARBAGE)
                    else:
                        reply = up_head + up_body
                entry["status"] = int(reply.split(b" ", 2)[1])
                await asyncio.sleep(delay)  # the answer's way back
                if client_reader.at_eof():
                    entry["clientGone"] = True  # the client closed (or died) before its answer came
                client_writer.write(reply)
                await client_writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (OSError, asyncio.IncompleteReadError):
            return
        finally:
            client_writer.close()

    async def main():
        server = await asyncio.start_server(handle, HOST, listen_port, limit=MAX_HEAD)
        print(f"listening on {server.sockets[0].getsockname()[1]}", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


class FaultProxy:
    """The proxy process in front of `upstream_port` (loopback), `delay_ms` added each way."""

    def __init__(self, upstream_port, delay_ms=100, popen=subprocess.Popen):
        from harness.server import die_with_parent
        self.process = popen([sys.executable, os.path.abspath(__file__), str(upstream_port), "--delay-ms", str(delay_ms)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
        line = self.process.stdout.readline().strip()
        found = re.fullmatch(r"listening on (\d+)", line)
        if not found:
            self.stop()
            raise RuntimeError(f"the fault proxy did not start: {line!r}")
        self.port = int(found.group(1))
        self.url = f"http://{HOST}:{self.port}"

    def _call(self, method, path, document=None):
        data = None if document is None else json.dumps(document).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def fault(self, mode, count=1, match=None):
        return self._call("POST", "/__fault", {"mode": mode, "count": count, **({"match": match} if match else {})})

    def state(self):
        return self._call("GET", "/__fault")

    def requests(self, reset=False):
        return self._call("DELETE" if reset else "GET", "/__requests")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)
        self.process.stdout.close()


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if not arguments or arguments[0].startswith("-"):
        raise SystemExit("usage: faultproxy.py UPSTREAM_PORT [--delay-ms 100] [--port 0]")
    options = dict(zip(arguments[1::2], arguments[2::2]))
    try:
        proxy_main(int(arguments[0]), float(options.get("--delay-ms", "100")) / 1000, int(options.get("--port", "0")))
    except KeyboardInterrupt:
        pass
