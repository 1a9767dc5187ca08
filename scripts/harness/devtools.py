"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
NUL-terminated JSON on file descriptors 3 and 4), and its tabs.

    browser = Chromium(work, viewport=(1440, 1000)); browser.start()
    page = Page(browser)                          # the first tab, attached
    page.call("Page.navigate", {"url": url}); page.until("document.readyState === 'complete'")
    page.click("testid"); page.type_into("testid", "text"); page.press("Enter")
    other = Page.opened_by(browser, lambda: page.click("follow-link"))   # a tab the page opens
    tab = Page.new_tab(browser)                   # a blank tab of our own
    browser.trace_start(["devtools.timeline", "v8"]); ...; events = browser.trace_stop()   # Chromium's tracing
    browser.stop()

Commands answer or raise CDPError; events (method, params, sessionId) collect in
`browser.events`, network requests included. Standard library only.
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import threading
import time

from harness.server import die_with_parent

WAIT = 10.0  # seconds a command, or a condition in a page, may take by default
STARTUP = 60.0  # seconds the browser may take to answer its first command


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

    def __init__(self, work, viewport=(1440, 1000), extra_args=()):
        self.work = work
        self.viewport = viewport  # the window's size, and each tab's
        self.extra_args = list(extra_args)  # more command-line switches (e.g. --enable-precise-memory-info)
        self.process = None
        self.events = []
        self._answers = {}
        self._next_id = 0
        self._lock = threading.Condition()
        self._reader = None
        self._out = None
        self.front = None  # the Page in front: the others are hidden tabs

    def start(self):
        binary = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            raise RuntimeError("no chromium: install Debian's `chromium` (scripts/test.sh does) or set CHROMIUM")
        # The browser reads commands from fd 3 and writes answers to fd 4. The pipe ends are moved
        # above 10 first, so the dup2 calls in the child cannot overwrite one another.
        to_browser_r, to_browser_w = (_above_ten(fd) for fd in os.pipe())
        from_browser_r, from_browser_w = (_above_ten(fd) for fd in os.pipe())

        def child_setup():
            die_with_parent()
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                f"--user-data-dir={os.path.join(self.work, 'profile')}", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--disable-dev-shm-usage",
                f"--window-size={self.viewport[0]},{self.viewport[1]}", *self.extra_args, "about:blank"]
        with open(os.path.join(self.work, "chromium.log"), "wb") as log:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            pass_fds=(3, 4), preexec_fn=child_setup, close_fds=True)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        self._out = os.fdopen(to_browser_w, "wb", buffering=0)
        self._reader = threading.Thread(target=self._read, args=(from_browser_r,), daemon=True)
        self._reader.start()
        # The first answer comes once the browser has started: seconds on a busy machine (a fresh
        # profile, fonts, the CI's build beside it; 10 s was seen to run out), so it waits longer
        # than a command does.
        self.call("Browser.getVersion", timeout=STARTUP)

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
        return self.answer(self.send(method, params, session), method, timeout)

    def send(self, method, params=None, session=None):
        """Sends a command without waiting; `answer` waits for what it returns."""
        with self._lock:
            self._next_id += 1
            number = self._next_id
        message = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._out.write(json.dumps(message).encode() + b"\0")
        return number

    def answer(self, number, method, timeout=WAIT):
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

    def wait_event(self, method, since=0, timeout=WAIT):
        """The params of the first event `method` at index `since` or after in `events`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                found = next((params for name, params, _ in self.events[since:] if name == method), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or None in self._answers:
                    raise CDPError(f"no {method} within {timeout}s")
                self._lock.wait(left)

    def trace_start(self, categories):
        """Starts Chromium's tracing (every process) with these categories; `trace_stop` ends it."""
        self.call("Tracing.start", {"traceConfig": {"includedCategories": list(categories), "recordMode": "recordAsMuchAsPossible"},
                                    "transferMode": "ReturnAsStream"})

    def trace_stop(self, timeout=60.0):
        """Ends the tracing `trace_start` began; returns its events (the JSON trace format's dicts)."""
        seen = len(self.events)
        self.call("Tracing.end")
        stream = self.wait_event("Tracing.tracingComplete", seen, timeout)["stream"]
        chunks = []
        while True:
            piece = self.call("IO.read", {"handle": stream, "size": 1 << 20}, timeout=timeout)
            data = piece.get("data", "")
            chunks.append(base64.b64decode(data) if piece.get("base64Encoded") else data.encode())
            if piece.get("eof"):
                break
        self.call("IO.close", {"handle": stream})
        trace = json.loads(b"".join(chunks))
        return trace["traceEvents"] if isinstance(trace, dict) else trace

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
    """One tab: evaluate JavaScript, wait for a condition, click and type like a user. Its network
    requests are recorded too (Network.requestWillBeSent in the browser's events)."""

    def __init__(self, browser, session=None, waiting=False):
        self.browser = browser
        self.last_error = None
        if session is None:
            targets = browser.call("Target.getTargets")["targetInfos"]
            page = next((t for t in targets if t["type"] == "page"), None)
            target_id = page["targetId"] if page else browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})["sessionId"]
        self.session = session
        browser.front = browser.front or self
        # Sent together: a tab waiting to start answers them only once it runs (`opened_by`).
        sent = [(method, browser.send(method, params, session)) for method, params in [
            *((f"{domain}.enable", None) for domain in ("Page", "Runtime", "Log", "Network")),
            ("Emulation.setDeviceMetricsOverride", {"width": browser.viewport[0], "height": browser.viewport[1], "deviceScaleFactor": 1, "mobile": False}),
            *([("Runtime.runIfWaitingForDebugger", None)] if waiting else [])]]
        for method, number in sent:
            browser.answer(number, method)

    @classmethod
    def opened_by(cls, browser, press, timeout=WAIT):
        """The tab that `press()` opens, attached while it waits to start, so that every request
        it makes (its first ones included) is recorded. Auto-attaching stays on afterwards:
        turning it off would detach the new tab's session."""
        seen = len(browser.events)
        browser.call("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
        press()
        deadline = time.monotonic() + timeout
        while True:
            attached = next((params for method, params, _ in browser.events[seen:]
                             if method == "Target.attachedToTarget" and params.get("waitingForDebugger")
                             and params["targetInfo"]["type"] == "page"), None)
            if attached:
                break
            if time.monotonic() > deadline:
                raise CDPError(f"no new tab opened within {timeout}s")
            time.sleep(0.05)
        page = cls(browser, session=attached["sessionId"], waiting=True)
        browser.front = page
        return page

    @classmethod
    def new_tab(cls, browser, timeout=2.0):
        """A new blank tab of our own. With auto-attaching on (left on by `opened_by`), the tab
        comes attached and waiting to start; else it is attached here."""
        seen = len(browser.events)
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        deadline = time.monotonic() + timeout
        attached = None
        while attached is None and time.monotonic() < deadline:
            attached = next((params for method, params, _ in browser.events[seen:]
                             if method == "Target.attachedToTarget" and params["targetInfo"]["targetId"] == target), None)
            time.sleep(0.02)
        if attached:
            return cls(browser, session=attached["sessionId"], waiting=attached.get("waitingForDebugger", False))
        return cls(browser, session=browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"])

    def call(self, method, params=None, timeout=WAIT):
        return self.browser.call(method, params, session=self.session, timeout=timeout)

    def js(self, expression):
        """The value of a JavaScript expression (awaited if it is a promise)."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise CDPError(f"{expression[:80]!r} threw {details.get('exception', {}).get('description') or details.get('text')}")
        return answer["result"].get("value")

    def until(self, expression, timeout=WAIT):
        """Waits until `expression` is truthy; returns its value, or None on time-out (the last
        error, while the page was loading and had no document, is kept in `last_error`)."""
        deadline = time.monotonic() + timeout
        self.last_error = None
        while time.monotonic() < deadline:
            try:
                value = self.js(expression)
            except CDPError as error:  # the page is loading: no document, or its context is gone
                value, self.last_error = None, error
            if value:
                return value
            time.sleep(0.05)
        return None

    def wait(self, expression, timeout=WAIT):
        """Waits until `expression` is truthy and the page is idle (no request or animation running);
        returns its value, or raises with what the page shows."""
        value = self.until(f"document.body && document.body.dataset.state === 'idle' && ({expression})", timeout)
        if value:
            return value
        try:
            shows = self.snapshot()
        except CDPError:
            shows = self.last_error
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
        self.to_front()
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

    def to_front(self):
        """Brings this tab to the front (the other one is then hidden) before a user's input."""
        if self.browser.front is not self:
            self.call("Page.bringToFront")
            self.browser.front = self

    def mouse(self, kind, x, y, buttons=0):
        self.to_front()
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
        codes = {"Enter": (13, "\r"), "Escape": (27, None), "Tab": (9, None), "ArrowRight": (39, None), "ArrowDown": (40, None),
                 "PageUp": (33, None)}
        number, text = codes[key]
        self.to_front()
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
