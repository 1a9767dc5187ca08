#!/usr/bin/env python3
"""The engine conformance harness (engine-suite/README.md): runs every case of the suite through
any port's runner and compares each answer byte for byte, prints pass/fail counts and the
coverage table, then (with --server) walks the sample app at random on a real server and the
runner side by side, step for step.

    scripts/engine_suite.py [--suite engine-suite] [--server PATH/TO/flowstack]
                            [--walks 8] [--steps 60] [--seed 36] RUNNER-COMMAND...

    scripts/engine_suite.py --server .build/debug/flowstack .build/debug/flowstack engine-suite run
    scripts/engine_suite.py --server .build/debug/flowstack --browser clients/js/test/browser/runner.html

The runner is started once and kept for the whole run (a case starts with its bundle line), so a
port that keeps state from one case into the next fails. The walks start `flowstack serve` on a
temporary SQLite file and a free loopback port; each walk is a new session whose bundle
(GET /v1/sessions/{id}/bundle) starts a case in the runner; at every step an action is chosen
from the state's available actions and from actions with params (some refused), posted to the
server and given to the runner, and the two answers must be the same bytes (a refusal: the same
status, code and members). With --browser PAGE the runner is a page in headless Chromium (Debian's
`chromium`, or $CHROMIUM) served from this repository: the JavaScript engine runs the same cases
and walks in a browser. Exit status: 0 all passed, 1 a check failed, 2 usage.
"""

import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.server import FlowStackProcess, exit_on_sigterm  # noqa: E402


class Runner:
    """A runner process: one line in, one line out."""

    def __init__(self, command):
        self.command = command
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def answer(self, line):
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()
        out = self.process.stdout.readline()
        if not out.endswith(b"\n"):
            raise RuntimeError(f"the runner {' '.join(self.command)} ended without answering {line[:200]!r}")
        return out[:-1]

    def close(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class BrowserRunner:
    """A runner inside a page of headless Chromium: `page`, a page of this repository served by a
    static server on a free loopback port, keeps `window.flowstackRunner` (an object whose
    `answer(line)` returns the answer line); each line is handed to it over the DevTools
    protocol. Any exception or console error in the page fails the run."""

    def __init__(self, page):
        import http.server
        import threading
        from harness.devtools import Chromium, Page

        root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

        class Files(http.server.SimpleHTTPRequestHandler):
            extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                              ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json"}

            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=root, **kwargs)

            def log_message(self, *args):
                pass

        self.command = ["chromium", page]
        self.files = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Files)
        threading.Thread(target=self.files.serve_forever, daemon=True).start()
        self.work = tempfile.mkdtemp(prefix="engine-suite-browser-")
        self.browser = Chromium(self.work)
        self.browser.start()
        self.page = Page(self.browser)
        self.page.call("Page.navigate", {"url": f"http://127.0.0.1:{self.files.server_address[1]}/{page}"})
        if not self.page.until("window.flowstackRunner !== undefined", timeout=30):
            raise RuntimeError(f"{page} never made window.flowstackRunner: {self.errors() or self.page.last_error}")

    def errors(self):
        """Exceptions thrown and errors logged in the page so far."""
        found = []
        for method, params, _ in self.browser.events:
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append(details.get("exception", {}).get("description") or details.get("text"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(" ".join(str(arg.get("value", arg.get("description"))) for arg in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(params["entry"].get("text"))
        return found

    def answer(self, line):
        got = self.page.js(f"window.flowstackRunner.answer({json.dumps(line.decode())})")
        if not isinstance(got, str):
            raise RuntimeError(f"the page's runner answered {got!r} to {line[:200]!r}")
        return got.encode()

    def close(self):
        self.browser.stop()
        self.files.shutdown()
        shutil.rmtree(self.work, ignore_errors=True)


def read_cases(suite):
    folder = os.path.join(suite, "cases")
    cases = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(folder, name), "rb") as file:
            data = file.read()
        lines = data.split(b"\n")
        if lines[-1] != b"":
            raise SystemExit(f"{name}: the last line has no newline")
        lines.pop()
        cases.append((name, json.loads(lines[0]), lines[1:]))
    return cases


def run_cases(runner, cases):
    """Every case through the runner; returns (cases passed, cases failed, lines passed, lines failed)."""
    passed = failed = lines_passed = lines_failed = 0
    for name, header, lines in cases:
        case_ok = True
        for index in range(0, len(lines) - 1, 2):
            got = runner.answer(lines[index])
            if got == lines[index + 1]:
                lines_passed += 1
                continue
            lines_failed += 1
            if case_ok:
                print(f"FAIL {name} line {index + 3}: {lines[index][:160].decode(errors='replace')}")
                print(f"  expected {lines[index + 1][:400].decode(errors='replace')}")
                print(f"  got      {got[:400].decode(errors='replace')}")
            case_ok = False
        if case_ok:
            passed += 1
        else:
            failed += 1
    return passed, failed, lines_passed, lines_failed


def coverage(suite, cases):
    """The coverage table from the features each case header lists (observed when generated);
    returns the features no case exercises."""
    with open(os.path.join(suite, "features.json")) as file:
        features = [entry["feature"] for entry in json.load(file)]
    width = max(len(feature) for feature in features)
    print(f"{'feature'.ljust(width)}  cases")
    missing = []
    for feature in features:
        count = sum(1 for _, header, _ in cases if feature in header.get("features", []))
        print(f"{feature.ljust(width)}  {count}")
        if count == 0:
            missing.append(feature)
    return missing


class Server:
    """The session API of a running server, over one keep-alive connection."""

    def __init__(self, port):
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(self, method, path, body=None, token=None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        return response.status, response.read()


def refusal_of(status, body, expected):
    """The refusal line a problem answer means (see Tests/FlowServerTests/Interop/EngineSuiteServerTests.swift):
    status, code and extension members; the pointer when the problem names one, else the runner's."""
    problem = json.loads(body)
    refused = {key: problem[key] for key in ("chain", "code", "flow", "link", "step") if key in problem}
    errors = problem.get("errors") or []
    expected_pointer = (expected.get("refused") or {}).get("pointer") if isinstance(expected, dict) else None
    refused["pointer"] = errors[0].get("pointer") if errors else expected_pointer
    refused["status"] = status
    return {"refused": refused}


def row_ids(state, screen_id):
    """The ids of the rows of a screen's list, from the state's root (screens and top leave lists out)."""
    def visit(node):
        for entry in node.get("entries") or []:
            if "feature" in entry:
                if entry.get("id") == screen_id:
                    return [row["id"] for section in entry.get("sections") or [] for row in section["rows"]]
            else:
                found = visit(entry)
                if found is not None:
                    return found
        presented = node.get("presented")
        return visit(presented) if presented else None
    return visit(state.get("root") or {}) or []


def param_actions(state, rng):
    """Actions with params the sample app takes on the screen on top (some refused there)."""
    top = (state.get("top") or {})
    if state.get("interaction") is not None:
        return [{"type": "interaction.update", "params": {"progress": rng.randint(0, 10) / 10}},
                {"type": "interaction.end", "params": {"progress": rng.randint(0, 10) / 10, "velocity": rng.randint(0, 600)}},
                {"type": "interaction.cancel"}, {"type": "back"}]
    feature = top.get("feature")
    if feature == "address.list":
        # Row taps on the list's rows, and on a row that is gone (stale-row).
        row = rng.choice(row_ids(state, top["id"]) + ["gone"])
        return [{"type": "address.chosen", "from": top["id"], "params": {"address": {"city": f"c{rng.randint(0, 9)}"}}},
                {"type": "address.chosen", "from": top["id"], "row": row},
                {"type": "address.removed", "from": top["id"], "row": row},
                {"type": "address.removed", "from": top["id"]},
                {"type": "address.add", "from": top["id"]}]
    if feature == "address.form":
        # A new row joins the list below (refused for a section or an id the list does not take).
        added = {"id": rng.choice(["home", f"n{rng.randint(0, 9)}", ""]), "country": rng.choice(["FR", "DE", "IT"]),
                 "address": {"city": f"a{rng.randint(0, 9)}"}}
        return [{"type": "address.saved", "from": top["id"], "params": {"address": {"city": f"s{rng.randint(0, 9)}"}}},
                {"type": "address.added", "from": top["id"], "params": added}]
    if feature == "paywall.offer":
        return [{"type": "paywall.buy", "from": top["id"], "params": {"productId": "pro"}}]
    if feature == "purchase":
        return [{"type": "purchase.completed", "from": top["id"], "params": {"transactionId": f"t{rng.randint(0, 9)}"}},
                {"type": "purchase.failed", "from": top["id"], "params": {"reason": "declined"}}]
    return [
        {"type": "home.selectTab", "from": top.get("id", "e1"), "params": {"index": rng.randint(0, 2)}},
        {"type": "home.presentModal", "params": {"content": f"c{rng.randint(0, 9)}"}},
        {"type": "link", "params": {"uri": rng.choice(["/home", "/home/1", "/modal/Hi", "/nowhere", "/home/x"])}},
        {"type": "link.cancel"},
        {"type": "back"},
        # Refused: a stale source, and an outcome of a step that is not on screen.
        {"type": "onboarding.showSecond", "from": "e1"},
        {"type": "purchase.failed", "params": {"reason": "declined"}},
    ]


def walk(server, runner, rng, user, attributes, steps, kinds):
    """One random walk; returns (steps agreed, disagreements); counts what each agreed step
    compared in `kinds` (states, refusals, available)."""
    agreed = failed = 0
    status, body = server.send("POST", "/v1/sessions", json.dumps({"userId": user, "attributes": attributes}))
    if status != 201:
        raise RuntimeError(f"POST /v1/sessions answered {status}: {body[:300]!r}")
    created = json.loads(body)
    sid, token = created["session"]["id"], created["session"]["token"]
    status, bundle = server.send("GET", f"/v1/sessions/{sid}/bundle", token=token)
    if status != 200:
        raise RuntimeError(f"GET bundle answered {status}: {bundle[:300]!r}")
    # A raw newline in JSON is whitespace between tokens (a string holds it escaped): the bundle
    # goes on one line as it is, without parsing and writing it again.
    line = b'{"bundle":' + bundle.replace(b"\r", b" ").replace(b"\n", b" ") + b"}"
    _, state_bytes = server.send("GET", f"/v1/sessions/{sid}", token=token)
    got = runner.answer(line)
    if got != state_bytes:
        print(f"WALK FAIL {user}: the bundle's state\n  server {state_bytes[:300]!r}\n  runner {got[:300]!r}")
        return agreed, failed + 1
    state = json.loads(state_bytes)
    for step in range(steps):
        roll = rng.random()
        if roll < 0.1:
            status, answer = server.send("GET", f"/v1/sessions/{sid}/actions/available", token=token)
            got = runner.answer(b'{"available":true}')
            what = "available"
        else:
            _, available = server.send("GET", f"/v1/sessions/{sid}/actions/available", token=token)
            offered = []
            for entry in json.loads(available)["actions"]:
                action = {"type": entry["type"]}
                if entry["from"] is not None:
                    action["from"] = entry["from"]
                if not any(param["required"] for param in entry["params"]):
                    offered.append(action)
                    if entry["interactive"] and state.get("interaction") is None:
                        offered.append(dict(action, interactive=True))
            choices = offered if offered and roll < 0.65 else param_actions(state, rng)
            action = rng.choice(choices)
            mode = rng.choice(["", "", "predict", "dryRun"])
            query = {"": "", "predict": "?predict=true", "dryRun": "?dryRun=true"}[mode]
            text = json.dumps(action, separators=(",", ":"))
            status, answer = server.send("POST", f"/v1/sessions/{sid}/actions{query}", text, token=token)
            request = {"action": action}
            if mode:
                request[mode] = True
            got = runner.answer(json.dumps(request, separators=(",", ":")).encode())
            what = f"{mode or 'post'} {text}"
        if status == 200:
            ok = got == answer
            if ok and what != "available" and not what.startswith("dryRun"):
                state = json.loads(answer)
        else:
            try:
                expected = json.loads(got)
                ok = refusal_of(status, answer, expected) == expected
            except (ValueError, KeyError):
                ok = False
        if ok:
            agreed += 1
            kind = "available" if what == "available" else "states" if status == 200 else "refusals"
            kinds[kind] = kinds.get(kind, 0) + 1
        else:
            failed += 1
            print(f"WALK FAIL {user} step {step} ({what}) at version {state.get('version')}:\n"
                  f"  server {status} {answer[:400]!r}\n  runner {got[:400]!r}")
            return agreed, failed  # the two sides may now differ; the next walk starts afresh
    return agreed, failed


def run_walks(binary, runner, walks, steps, seed):
    work = tempfile.mkdtemp(prefix="engine-suite-")
    server = FlowStackProcess(binary, work)
    try:
        server.start()
        server.wait_healthy()
        api = Server(server.port)
        rng = random.Random(seed)
        agreed = failed = 0
        kinds = {}
        for number in range(walks):
            # Users repeat, so later walks start at home once an earlier one finished onboarding.
            user = f"walker-{seed}-{number % 3}"
            attributes = {"country": "DE"} if number % 4 == 1 else {}
            a, f = walk(api, runner, rng, user, attributes, steps, kinds)
            agreed += a
            failed += f
        return agreed, failed, kinds
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def main():
    exit_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine-suite"))
    parser.add_argument("--server", help="a flowstack binary: walk the sample app on it and the runner side by side")
    parser.add_argument("--walks", type=int, default=8)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--browser", metavar="PAGE",
                        help="run the runner in headless Chromium: PAGE, a path in this repository, sets window.flowstackRunner")
    parser.add_argument("runner", nargs=argparse.REMAINDER, help="the runner's command and its arguments")
    args = parser.parse_args()
    if not args.runner and not args.browser:
        parser.print_usage(sys.stderr)
        return 2
    cases = read_cases(args.suite)
    runner = BrowserRunner(args.browser) if args.browser else Runner(args.runner)
    failed_any = False
    try:
        passed, failed, lines_passed, lines_failed = run_cases(runner, cases)
        print(f"cases: {passed} passed, {failed} failed ({lines_passed} lines passed, {lines_failed} failed)")
        failed_any = failed > 0
        missing = coverage(args.suite, cases)
        if missing:
            print(f"FAIL no case exercises {', '.join(missing)}")
            failed_any = True
        if args.server:
            agreed, disagreed, kinds = run_walks(os.path.abspath(args.server), runner, args.walks, args.steps, args.seed)
            shown = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
            print(f"walks: {args.walks} walks (seed {args.seed}), {agreed} steps agreed with the server ({shown}), {disagreed} disagreed")
            # Walks that never compared a state or never a refusal would prove little.
            failed_any = failed_any or disagreed > 0 or not kinds.get("states") or not kinds.get("refusals")
        if args.browser:
            errors = runner.errors()
            for error in errors:
                print(f"FAIL the page: {error}")
            failed_any = failed_any or bool(errors)
    finally:
        runner.close()
    print("engine suite: " + ("FAILED" if failed_any else "passed"))
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
