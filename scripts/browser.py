#!/usr/bin/env python3
"""Walks the playground in headless Chromium by pressing its own buttons.

Usage: scripts/browser.py [PATH/TO/flowstack]   (default: the binary of `swift build --show-bin-path`)

Starts `flowstack serve` on 127.0.0.1 (a free port, a temporary database) and headless Chromium
(Debian's `chromium`, or $CHROMIUM), and drives the page over the DevTools protocol on a pipe
(`--remote-debugging-pipe`: NUL-terminated JSON on file descriptors 3 and 4), with mouse and
keyboard events as a user makes them:
  1. the page starts a session on load: onboarding.first;
  2. onboarding.showSecond, then onboarding.completed (home.first), then the second tab of the
     phone's tab bar, a refused selectTab (its problem is shown), the modal opened with text
     typed into its `content` and Enter, and closed;
  3. a second session from the form (another user, country DE: the eu-face-scan flag), where
     the slider drags onboarding.second back to onboarding.first (finish), the phone's own
     button shows onboarding.second again, a short drag cancels, PageUp on the slider opens an
     interaction that Escape cancels, and Enter on onboarding.completed shows onboarding.faceScan.
After each step it reads the page (the phone's top screen and version, the graph's highlighted
node, the log's length) and compares it with what the server says (the session read with its
token). Any JavaScript exception or console error fails the run. A screenshot of the page at
home is kept at .build/browser/playground.png (and one mid-swipe at .build/browser/swipe.png).
Prints each failure, then `browser: N passed, M failed`; exits 1 when anything failed.
Standard library only.
"""
import base64
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from check_harness import FlowStackProcess, Tally, _die_with_parent, exit_on_sigterm

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.path.join(REPO, ".build", "browser")
VIEWPORT = (1440, 1000)
WAIT = 10.0  # seconds any one step may take to show in the page


class CDPError(Exception):
    pass


def _above_ten(fd):
    """`fd` moved to a descriptor number of 10 or more (closed on exec unless passed on)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Chromium:
    """Headless Chromium driven over --remote-debugging-pipe; `call` sends a command and waits for
    its answer, events are kept in `events` (method, params, sessionId)."""

    def __init__(self, work):
        self.work = work
        self.process = None
        self.events = []
        self._answers = {}
        self._next_id = 0
        self._lock = threading.Condition()
        self._reader = None
        self._out = None

    def start(self):
        binary = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            raise RuntimeError("no chromium: install Debian's `chromium` (scripts/test.sh does) or set CHROMIUM")
        # The browser reads commands from fd 3 and writes answers to fd 4. The pipe ends are moved
        # above 10 first, so the dup2 calls in the child cannot overwrite one another.
        to_browser_r, to_browser_w = (_above_ten(fd) for fd in os.pipe())
        from_browser_r, from_browser_w = (_above_ten(fd) for fd in os.pipe())

        def child_setup():
            _die_with_parent()
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                f"--user-data-dir={os.path.join(self.work, 'profile')}", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--disable-dev-shm-usage",
                f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}", "about:blank"]
        with open(os.path.join(self.work, "chromium.log"), "wb") as log:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            pass_fds=(3, 4), preexec_fn=child_setup, close_fds=True)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        self._out = os.fdopen(to_browser_w, "wb", buffering=0)
        self._reader = threading.Thread(target=self._read, args=(from_browser_r,), daemon=True)
        self._reader.start()

    def _read(self, fd):
        buffer = b""
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while True:
                chunk = pipe.read(1 << 16)
                if not chunk:
                    break
                buffer += chunk
                while b"\0" in buffer:
                    message, buffer = buffer.split(b"\0", 1)
                    data = json.loads(message)
                    with self._lock:
                        if "id" in data:
                            self._answers[data["id"]] = data
                        else:
                            self.events.append((data.get("method"), data.get("params", {}), data.get("sessionId")))
                        self._lock.notify_all()
        with self._lock:
            self._answers[None] = {"error": {"message": "the browser closed the pipe"}}
            self._lock.notify_all()

    def call(self, method, params=None, session=None, timeout=WAIT):
        with self._lock:
            self._next_id += 1
            number = self._next_id
        message = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._out.write(json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._lock:
            while number not in self._answers and None not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CDPError(f"{method}: no answer within {timeout}s")
                self._lock.wait(left)
            answer = self._answers.pop(number, None) or self._answers[None]
        if "error" in answer:
            raise CDPError(f"{method}: {answer['error'].get('message')}")
        return answer.get("result", {})

    def stop(self):
        if self.process is None:
            return
        try:
            self.call("Browser.close", timeout=3)
        except (CDPError, OSError):
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        if self._out:
            self._out.close()
        self.process = None


class Page:
    """One tab: evaluate JavaScript, wait for a condition, click and type like a user."""

    def __init__(self, browser):
        self.browser = browser
        targets = browser.call("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target_id = page["targetId"] if page else browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False})

    def call(self, method, params=None, timeout=WAIT):
        return self.browser.call(method, params, session=self.session, timeout=timeout)

    def js(self, expression):
        """The value of a JavaScript expression (awaited if it is a promise)."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise CDPError(f"{expression[:80]!r} threw {details.get('exception', {}).get('description') or details.get('text')}")
        return answer["result"].get("value")

    def wait(self, expression, timeout=WAIT):
        """Waits until `expression` is truthy and the page is idle (no request or animation running);
        returns its value, or raises with what the page shows."""
        deadline = time.monotonic() + timeout
        value = last_error = None
        while time.monotonic() < deadline:
            try:
                value = self.js(f"document.body && document.body.dataset.state === 'idle' && ({expression})")
            except CDPError as error:  # the page is loading: no document, or its context is gone
                value = None
                last_error = error
            if value:
                return value
            time.sleep(0.05)
        try:
            shows = self.snapshot()
        except CDPError:
            shows = last_error
        raise CDPError(f"the page never showed {expression!r} within {timeout}s (it shows {shows})")

    def snapshot(self):
        """What the page shows: the phone's top screen and version, the highlighted graph node, the log."""
        return self.js("""(() => {
            const phone = document.querySelector('[data-testid=phone]');
            const current = document.querySelector('[data-testid=graph] g.node.current');
            const onstack = Array.from(document.querySelectorAll('[data-testid=graph] g.node.onstack'), (n) => n.id);
            const app = window.FlowStackPlayground || {};
            const problem = document.querySelector('[data-testid=problem]');
            return {
                state: document.body.dataset.state,
                topFeature: phone.dataset.topFeature, topId: phone.dataset.topId, version: Number(phone.dataset.version),
                shownFeature: (document.querySelector('[data-testid=top-feature]') || {}).textContent || null,
                graphCurrent: current ? current.id : null, graphOnStack: onstack,
                logLength: document.querySelectorAll('[data-testid=log-entry]').length,
                stateJSONVersion: (() => { try { return JSON.parse(document.querySelector('[data-testid=state-json]').textContent).version; } catch (e) { return null; } })(),
                actions: Array.from(document.querySelectorAll('[data-testid^="action-row-"]'), (n) => n.dataset.testid.slice(11)),
                problem: problem.hidden ? null : problem.textContent.replace(/\\s+/g, ' ').trim(),
                session: app.session ? {id: app.session.id, token: app.session.token} : null,
            };
        })()""")

    def center(self, testid):
        """The middle of an element, scrolled into view; raises if it is missing, disabled or covered."""
        box = self.js(f"""(() => {{
            const element = document.querySelector('[data-testid="{testid}"]');
            if (!element) return {{missing: true}};
            element.scrollIntoView({{block: 'center', inline: 'center'}});
            const r = element.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            const hit = document.elementFromPoint(x, y);
            return {{x, y, disabled: Boolean(element.disabled), covered: !(hit && (hit === element || element.contains(hit))),
                     left: r.left, width: r.width}};
        }})()""")
        if box.get("missing"):
            raise CDPError(f"no element with data-testid={testid}")
        if box["disabled"]:
            raise CDPError(f"{testid} is disabled")
        if box["covered"]:
            raise CDPError(f"{testid} is covered by another element")
        return box

    def mouse(self, kind, x, y, buttons=0):
        params = {"type": kind, "x": x, "y": y, "button": "left" if kind != "mouseMoved" or buttons else "none",
                  "buttons": buttons, "clickCount": 1 if kind != "mouseMoved" else 0}
        self.call("Input.dispatchMouseEvent", params)

    def click(self, testid):
        box = self.center(testid)
        self.mouse("mouseMoved", box["x"], box["y"])
        self.mouse("mousePressed", box["x"], box["y"], buttons=1)
        self.mouse("mouseReleased", box["x"], box["y"])

    def type_into(self, testid, text):
        """Clicks a field, selects what it holds and types `text` over it."""
        self.click(testid)
        self.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": "a", "code": "KeyA", "modifiers": 2,
                                             "windowsVirtualKeyCode": 65, "commands": ["selectAll"]})
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": "a", "code": "KeyA", "modifiers": 2, "windowsVirtualKeyCode": 65})
        self.call("Input.insertText", {"text": text})

    def press(self, key):
        codes = {"Enter": (13, "\r"), "Escape": (27, None), "Tab": (9, None), "ArrowRight": (39, None), "PageUp": (33, None)}
        number, text = codes[key]
        down = {"type": "keyDown", "key": key, "code": key, "windowsVirtualKeyCode": number}
        if text:
            down["text"] = text
        self.call("Input.dispatchKeyEvent", down)
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": number})

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, timeout=20)["data"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))


class Walk:
    """The steps, each checked against the server."""

    def __init__(self, page, port, tally, browser):
        self.page, self.port, self.tally, self.browser = page, port, tally, browser
        self.expected_errors = 0  # console lines for 4xx answers a step provokes on purpose
        self.seen_events = 0

    def server(self, path, token):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=5) as answer:
            return json.loads(answer.read())

    def check(self, name, failure, details=""):
        self.tally.check(name, failure, details)

    def compare(self, step, feature):
        """The page against the server after `step`: top screen, version, graph, log, state JSON."""
        shown = self.page.snapshot()
        session = shown["session"]
        state = self.server(f"/v1/sessions/{session['id']}", session["token"])
        log = self.server(f"/v1/sessions/{session['id']}/actions?limit=1000", session["token"])["actions"]
        top = state["top"] or {}
        self.check(f"{step}: the server's top screen is {feature}", None if top.get("feature") == feature else f"it is {top.get('feature')}")
        self.check(f"{step}: the phone shows the server's top screen",
                   None if (shown["topFeature"], shown["topId"], shown["shownFeature"]) == (top.get("feature"), top.get("id"), top.get("feature"))
                   else "they differ", f"page {shown['topFeature']} {shown['topId']} {shown['shownFeature']!r}, server {top.get('feature')} {top.get('id')}")
        self.check(f"{step}: the page shows the server's version",
                   None if shown["version"] == state["version"] == shown["stateJSONVersion"] else "they differ",
                   f"phone {shown['version']}, state JSON {shown['stateJSONVersion']}, server {state['version']}")
        node = f"screen-{top.get('flow')}-{top.get('feature')}"
        self.check(f"{step}: the graph highlights {node}", None if shown["graphCurrent"] == node else f"it highlights {shown['graphCurrent']}")
        self.check(f"{step}: the log lists the server's {len(log)} actions",
                   None if shown["logLength"] == len(log) else f"it lists {shown['logLength']}")
        self.check(f"{step}: no problem is shown", None if shown["problem"] is None else "one is", shown["problem"])
        return shown, state

    def act(self, step, testid, feature, then=None):
        """Presses a button and waits for the new version in the page, then compares."""
        before = self.page.snapshot()["version"]
        try:
            (then or self.page.click)(testid)
            self.page.wait(f"Number(document.querySelector('[data-testid=phone]').dataset.version) > {before}")
        except CDPError as error:
            self.check(f"{step}: the page answers", str(error))
            return None, None
        return self.compare(step, feature)

    def drag_slider(self, to_fraction, steps, pause_after=0.0, midway=None):
        """Presses the slider at its left end, moves right to `to_fraction` of its width in
        `steps` moves, optionally calls `midway()` while still held, and lets go."""
        box = self.page.center("interactive-slider")
        left, width, y = box["left"] + 8, box["width"] - 16, box["y"]
        self.page.mouse("mouseMoved", left, y)
        self.page.mouse("mousePressed", left, y, buttons=1)
        for index in range(1, steps + 1):
            self.page.mouse("mouseMoved", left + width * to_fraction * index / steps, y, buttons=1)
            time.sleep(0.03)
            if midway and index == steps // 2:
                midway()
        time.sleep(pause_after)
        self.page.mouse("mouseReleased", left + width * to_fraction, y)

    def console_problems(self):
        """JavaScript exceptions and console errors since the last call, less the expected ones."""
        events = self.browser.events[self.seen_events:]
        self.seen_events += len(events)
        problems = []
        for method, params, _ in events:
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                problems.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                problems.append("console." + params["type"] + ": " + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                if entry.get("source") == "network" and self.expected_errors > 0:
                    self.expected_errors -= 1
                    continue
                problems.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
        return problems

    def run(self):
        page = self.page
        # 1. the page starts a session on load
        page.call("Page.navigate", {"url": f"http://127.0.0.1:{self.port}/"})
        try:
            page.wait("document.readyState === 'complete' && document.querySelector('[data-testid=phone]').dataset.topFeature",
                      timeout=30)  # a first start of Chromium builds its caches
        except CDPError as error:
            self.check("the page starts a session on load", str(error))
            return
        shown, state = self.compare("on load", "onboarding.first")
        first_session = shown["session"]["id"]
        self.check("on load: the page offers onboarding.showSecond", None if "onboarding.showSecond" in shown["actions"] else "it does not", shown["actions"])

        # 2. onboarding to home, a tab, the modal
        shown, _ = self.act("showSecond", "action-onboarding.showSecond", "onboarding.second")
        if shown:
            self.check("showSecond: the graph marks onboarding.first as behind the top",
                       None if "screen-onboarding-onboarding.first" in shown["graphOnStack"] else "it does not", shown["graphOnStack"])
            depth = page.js("document.querySelector('[data-testid=phone]').dataset.depth")
            self.check("showSecond: the phone draws two screens", None if depth == "2" else f"it draws {depth}")
        self.act("completed", "action-onboarding.completed", "home.first")
        tabs = page.js("Array.from(document.querySelectorAll('[data-testid=tabbar] .tab'), (t) => t.textContent)")
        self.check("at home: the phone shows a tab bar with two tabs", None if tabs and len(tabs) == 2 else f"it shows {tabs}")
        self.act("tab bar", "tab-1", "home.second")
        selected = page.js("(document.querySelector('[data-testid=tabbar] .tab.selected') || {}).textContent")
        self.check("tab bar: the second tab is selected", None if selected and selected.endswith("second") else f"selected: {selected!r}")

        # a refused action is shown as a problem, and changes nothing
        try:
            before = page.snapshot()["version"]
            page.type_into("param-home.selectTab-index", "7")
            self.expected_errors = 1
            page.click("action-home.selectTab")
            page.wait("!document.querySelector('[data-testid=problem]').hidden")
            shown = page.snapshot()
            self.check("a refused selectTab shows its problem", None if re.search(r"\(4\d\d\)", shown["problem"] or "") else "it does not", shown["problem"])
            self.check("a refused selectTab changes nothing", None if shown["version"] == before and shown["topFeature"] == "home.second" else "it did", shown)
            page.click("problem-close")
            page.wait("document.querySelector('[data-testid=problem]').hidden")
        except CDPError as error:
            self.check("a refused selectTab shows its problem", str(error))

        def type_and_enter(_testid):
            page.type_into("param-home.presentModal-content", "Hello from Chromium")
            page.press("Enter")
        shown, state = self.act("presentModal (typed, then Enter)", "param-home.presentModal-content", "modal", then=type_and_enter)
        if state:
            params = page.js("(document.querySelector('[data-testid=top-params]') || {}).textContent || ''")
            self.check("presentModal: the phone shows the modal's content", None if "Hello from Chromium" in params else "it does not", params)
            self.check("presentModal: the server has the content", None if state["top"]["params"].get("content") == "Hello from Chromium" else "it does not", state["top"])
            self.check("presentModal: the transition is a present", None if state["transition"]["type"] == "present" else state["transition"]["type"])
        self.act("modal.dismiss", "action-modal.dismiss", "home.second")
        page.screenshot(os.path.join(SHOTS, "playground.png"))

        # 3. a second session from the form; the slider drags onboarding.second back
        user = f"browser-{os.getpid()}"
        try:
            page.type_into("form-user", user)
            page.type_into("form-country", "DE")
            page.click("start-session")
            page.wait(f"window.FlowStackPlayground.session && window.FlowStackPlayground.session.id !== '{first_session}'")
        except CDPError as error:
            self.check("the form starts a second session", str(error))
            return
        shown, state = self.compare("new session (DE)", "onboarding.first")
        self.check("new session: the server has the form's user and flag",
                   None if state["userId"] == user and state["flags"].get("eu-face-scan", {}).get("value") is True else "it does not",
                   {"userId": state["userId"], "flags": state["flags"]})
        self.act("DE showSecond", "action-onboarding.showSecond", "onboarding.second")

        interactive = page.js("document.querySelector('[data-testid=interactive]').hidden === false && document.querySelector('[data-testid=interactive-action]').value")
        self.check("onboarding.second: the slider offers onboarding.returnToFirst",
                   None if interactive == "onboarding.returnToFirst" else f"it offers {interactive!r}")
        version = page.snapshot()["version"]
        midway = {}

        def look_midway():
            try:
                page.wait("document.body.dataset.interaction === 'pending'", timeout=5)
                session = page.snapshot()["session"]
                midway["state"] = self.server(f"/v1/sessions/{session['id']}", session["token"])
                midway["log"] = len(self.server(f"/v1/sessions/{session['id']}/actions?limit=1000", session["token"])["actions"])
                midway["shown"] = page.snapshot()
                midway["moved"] = page.js("(document.querySelector('[data-testid=phone] .card.top') || {style: {}}).style.transform")
                page.screenshot(os.path.join(SHOTS, "swipe.png"))
            except CDPError as error:
                midway["error"] = str(error)
        try:
            self.drag_slider(0.85, 12, midway=look_midway)
            page.wait(f"Number(document.querySelector('[data-testid=phone]').dataset.version) > {version}")
        except CDPError as error:
            self.check("the swipe finishes", str(error))
        interaction = (midway.get("state") or {}).get("interaction")
        self.check("mid-swipe: the server has the interaction pending", None if interaction else midway.get("error", "it has none"))
        shown = midway.get("shown") or {}
        self.check("mid-swipe: the page shows the server's version and log",
                   None if (shown.get("version"), shown.get("logLength")) == ((midway.get("state") or {}).get("version"), midway.get("log")) else "they differ",
                   f"page v{shown.get('version')} with {shown.get('logLength')} log entries, server v{(midway.get('state') or {}).get('version')} with {midway.get('log')}")
        progress = (interaction or {}).get("progress", 0)
        self.check("mid-swipe: the server has the slider's progress", None if 0.2 <= progress <= 0.6 else f"it has {progress}")
        self.check("mid-swipe: the phone moves the top screen with the finger",
                   None if (midway.get("moved") or "").startswith("translateX(") else f"its transform is {midway.get('moved')!r}")
        shown, state = self.compare("swipe back (finished)", "onboarding.first")
        if state:
            transition = state.get("transition") or {}
            self.check("swipe back: an interactive popTo was applied",
                       None if transition.get("interactive") and transition.get("type") in ("pop", "popTo") else "it was not", transition)
        self.act("DE showSecond again (the phone's own button)", "phone-action-onboarding.showSecond", "onboarding.second")

        # a short, slow drag cancels: the stack stays
        before = page.snapshot()["topId"]
        try:
            self.drag_slider(0.2, 4, pause_after=0.3)
            page.wait("document.body.dataset.interaction === 'none'")
        except CDPError as error:
            self.check("a short drag cancels", str(error))
        shown, state = self.compare("short drag (cancelled)", "onboarding.second")
        self.check("short drag: the same screen stays on top", None if state["top"]["id"] == before else f"{before} → {state['top']['id']}")
        self.check("short drag: nothing is pending", None if state["interaction"] is None else "an interaction is", state["interaction"])

        # the keyboard: arrows open and move the interaction, Escape cancels it; Enter presses a button
        try:
            before = page.snapshot()["topId"]
            page.js("document.querySelector('[data-testid=interactive-slider]').focus()")
            for _ in range(3):
                page.press("PageUp")
            page.wait("document.body.dataset.interaction === 'pending'")
            session = page.snapshot()["session"]
            pending = self.server(f"/v1/sessions/{session['id']}", session["token"])["interaction"] or {}
            self.check("keyboard: PageUp on the slider opens and moves the interaction",
                       None if pending.get("progress", 0) > 0 else "it did not", pending)
            page.press("Escape")
            page.wait("document.body.dataset.interaction === 'none'")
            self.compare("keyboard: Escape cancels", "onboarding.second")
            self.check("keyboard: the same screen stays on top", None if page.snapshot()["topId"] == before else "it changed")
        except CDPError as error:
            self.check("keyboard: the slider works with keys", str(error))

        def focus_and_enter(testid):
            page.js(f"document.querySelector('[data-testid=\"{testid}\"]').focus()")
            page.press("Enter")
        self.act("DE completed (Enter on the focused button)", "action-onboarding.completed", "onboarding.faceScan", then=focus_and_enter)
        focused = page.js("document.activeElement && document.activeElement.dataset.testid")
        self.check("after a keyboard press the focus stays on an action", None if (focused or "").startswith("action-") else f"it is on {focused!r}")


def main():
    if len(sys.argv) > 2:
        print("usage: browser.py [PATH/TO/flowstack]", file=sys.stderr)
        return 2
    exit_on_sigterm()
    if len(sys.argv) == 2:
        binary = os.path.abspath(sys.argv[1])
    else:
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        binary = os.path.join(bin_path, "flowstack")
    work = tempfile.mkdtemp(prefix="flowstack-browser-")
    server = FlowStackProcess(binary, work)
    browser = Chromium(work)
    tally = Tally()
    started = time.monotonic()
    walk = None
    try:
        server.start()
        browser.start()
        page = Page(browser)
        walk = Walk(page, server.port, tally, browser)
        walk.run()
    except Exception as error:  # a failure of the harness itself still counts, and still cleans up
        tally.check("the run completed", f"{type(error).__name__}: {error}")
        log = os.path.join(work, "chromium.log")
        if os.path.exists(log):
            print("browser: chromium's last lines:\n" + open(log, errors="replace").read()[-1500:], flush=True)
    finally:
        if walk:
            problems = walk.console_problems()
            tally.check("no JavaScript exception or console error", None if not problems else f"{len(problems)} of them", "\n     ".join(problems))
        browser.stop()
        status = server.stop()
        tally.check("the server stops with status 0", None if status == 0 else f"status {status}", server.stderr_text()[-500:])
        shutil.rmtree(work, ignore_errors=True)
    print(f"browser: finished in {time.monotonic() - started:.1f}s; screenshots in {os.path.relpath(SHOTS, os.getcwd())}", flush=True)
    print(f"browser: {tally.passed} passed, {tally.failed} failed", flush=True)
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
