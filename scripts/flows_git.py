#!/usr/bin/env python3
"""Flows kept in git, end to end: `flowstack init`, the offline commands on its result, and
`flows diff`, `flows push` and `flows pull` against a real server.

Usage: python3 scripts/flows_git.py [PATH/TO/flowstack]

1. Offline: `init DIR` writes a scaffold that `flows validate` and `flows test` (with its
   `--flags`) pass, and refuses a folder that is not empty; the offline commands see only the
   definitions given (a flow naming the sample app's `modal` fails without `--with-sample` and
   passes with it; a scenario that needs the scaffold's flag fails without `--flags`); `flows
   test` without definitions is a usage error; the sample app's own tests pass as CI runs them.
2. Against a server on a fresh SQLite file (harness.server): no token (2), a wrong
   token (3, naming 401) and an unreachable server (4); `diff` of the scaffold against the sample
   app (changed app, onboarding and home; modal and the checkout's flows only on the server; also as --json);
   `push --activate` makes one release and its flows live (a new session starts at the
   scaffold's welcome screen); pushing again makes no release; an edit shows in `diff` (with its
   JSON Pointer, `--exit-code` 1) and `push` makes a second release without making it live; flags
   alone make no release (3, said why); a release without tests is not activated unless
   `--untested`; a push whose tests fail exits 1 and activates nothing; `pull` into another folder writes files
   that `diff` finds equal to the server and that equal the live definitions as JSON.

Prints each failure, then `flows_git: N passed, M failed`; exits 1 when anything failed.
Standard library only.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, Tally, exit_on_sigterm, free_port  # noqa: E402
from harness.web import JSONServer  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(binary, *args, env=None, cwd=None):
    """Runs flowstack; answers (status, stdout, stderr)."""
    environment = dict(os.environ)
    environment.pop("FLOWSTACK_ADMIN_TOKEN", None)
    environment.pop("FLOWSTACK_SERVER", None)
    environment.update(env or {})
    done = subprocess.run([binary, *args], capture_output=True, text=True, env=environment, cwd=cwd, timeout=120)
    return done.returncode, done.stdout, done.stderr


def status_is(expected, result):
    status, stdout, stderr = result
    return None if status == expected else f"exit status {status}, expected {expected}"


def offline(binary, work, tally):
    app = os.path.join(work, "myapp")
    result = run(binary, "init", app)
    tally.check("init writes the scaffold", status_is(0, result), result[1] + result[2])
    for path in ("flows/app.json", "flows/onboarding.json", "flows/home.json", "flows/tests/onboarding.json",
                 "flags/onboarding-tour.json", "README.md", ".github/workflows/flows.yml"):
        tally.check(f"init wrote {path}", None if os.path.isfile(os.path.join(app, path)) else "missing")
    result = run(binary, "init", app)
    tally.check("init refuses a folder that is not empty (3)", status_is(3, result), result[2])

    flows, tests, flags = (os.path.join(app, name) for name in ("flows", "flows/tests", "flags"))
    result = run(binary, "flows", "validate", flows)
    tally.check("flows validate passes the scaffold", status_is(0, result), result[1] + result[2])
    tally.check("flows validate reads the folder's three flows",
                None if result[1].count(": ok (flow ") == 3 else "not three ok lines", result[1])
    result = run(binary, "flows", "test", tests, "--flows", flows, "--flags", flags)
    tally.check("flows test passes the scaffold's tests", status_is(0, result), result[1] + result[2])
    tally.check("flows test runs them all", None if "flows test: 5 passed, 0 failed" in result[1] else "not 5 passed", result[1])
    result = run(binary, "flows", "test", tests, "--flows", flows)
    tally.check("without --flags, the scenario that needs the flag fails (1)", status_is(1, result), result[1] + result[2])
    tally.check("... and names it", None if "the tour's flag is on for users in France: FAILED" in result[1] else "not named", result[1])
    result = run(binary, "flows", "test", tests)
    tally.check("flows test with no definitions is a usage error (2)", status_is(2, result), result[2])
    tally.check("... that says what to give", None if "--flows" in result[2] else "no hint", result[2])

    # A flow that names the sample app's modal: unknown without the sample, known with it.
    lonely = os.path.join(work, "lonely.json")
    with open(lonely, "w") as file:
        json.dump({"name": "lonely", "kind": "stacked", "initial": ["lonely.first"],
                   "on": {"lonely.help": [{"do": [{"present": {"flow": "modal"}}]}]}}, file)
    result = run(binary, "flows", "validate", lonely)
    tally.check("flows validate sees only the given files (unknown flow modal, 1)", status_is(1, result), result[1])
    tally.check("... naming the path of the reference", None if 'unknown flow "modal"' in result[1] else "not named", result[1])
    result = run(binary, "flows", "validate", "--with-sample", lonely)
    tally.check("flows validate --with-sample knows the sample's modal", status_is(0, result), result[1])
    result = run(binary, "flows", "graph", "--format", "mermaid", lonely)
    tally.check("flows graph draws a file alone", status_is(0, result), result[2])
    # The repository's own sample, as scripts/test.sh runs it.
    result = run(binary, "flows", "test", "flows/tests", "--flows", "flows", "--flags", "flags", cwd=REPO)
    tally.check("the sample app's tests pass as CI runs them", status_is(0, result), result[1] + result[2])
    result = run(binary, "flows", "test", "flows/tests", "--with-sample", cwd=REPO)
    tally.check("the sample app's tests pass with --with-sample", status_is(0, result), result[1] + result[2])
    return app


def redirect_checks(binary, flows, tally):
    """A server that answers 301 to another host: the CLI must not follow it, since Foundation
    would copy the Authorization header (the admin token) onto the redirected request."""
    import http.server
    import threading
    seen = []

    class Catcher(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"flows": []}')

        do_POST = do_GET

        def log_message(self, *args):
            pass

    catcher = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Catcher)
    target = f"http://localhost:{catcher.server_address[1]}"

    class Redirector(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(301)
            self.send_header("Location", target + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args):
            pass

    redirector = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirector)
    for server in (catcher, redirector):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        secret = {"FLOWSTACK_ADMIN_TOKEN": "secret-admin-token-of-32-bytes-or-more"}
        url = f"http://127.0.0.1:{redirector.server_address[1]}"
        result = run(binary, "flows", "diff", flows, "--server", url, env=secret)
        tally.check("diff does not follow a redirect (3)", status_is(3, result), result[1] + result[2])
        tally.check("... and says where it pointed", None if "redirect" in result[2] and target in result[2] else "not said", result[2])
        result = run(binary, "flows", "replay", "--server", url, "--flows", "onboarding=1", env=secret)
        tally.check("replay does not follow a redirect either (3)", status_is(3, result), result[1] + result[2])
        tally.check("the admin token never reached the redirect's host", None if not seen else f"it got {seen}", seen)
    finally:
        for server in (catcher, redirector):
            server.shutdown()
            server.server_close()


def online(binary, work, app, tally):
    server = FlowStackProcess(binary, work)
    server.start()
    try:
        url = f"http://127.0.0.1:{server.port}"
        api = JSONServer(server.port, server.admin_token)
        token = {"FLOWSTACK_ADMIN_TOKEN": server.admin_token}
        flows, flags = os.path.join(app, "flows"), os.path.join(app, "flags")

        result = run(binary, "flows", "diff", flows, "--server", url)
        tally.check("diff without a token is a usage error (2)", status_is(2, result), result[2])
        result = run(binary, "flows", "diff", flows, "--server", url, env={"FLOWSTACK_ADMIN_TOKEN": "wrong"})
        tally.check("diff with a wrong token exits 3", status_is(3, result), result[2])
        tally.check("... saying the token was refused", None if "401" in result[2] and "token" in result[2] else "not said", result[2])
        result = run(binary, "flows", "diff", flows, "--server", f"http://127.0.0.1:{free_port()}", env=token)
        tally.check("diff against an unreachable server exits 4", status_is(4, result), result[2])
        result = run(binary, "flows", "diff", flows, env=dict(token, FLOWSTACK_SERVER=url))
        tally.check("diff takes the server from FLOWSTACK_SERVER", status_is(0, result), result[2])
        redirect_checks(binary, flows, tally)
        text = result[1]
        for line in ("0 new, 3 changed, 0 unchanged, 5 only on the server", "changed    onboarding", "server     modal"):
            tally.check(f"diff says {line!r}", None if line in text else "missing", text)
        result = run(binary, "flows", "diff", flows, "--server", url, "--json", env=token)
        try:
            document = json.loads(result[1])
            names = sorted(flow["name"] for flow in document["changed"])
            only = sorted(flow["name"] for flow in document["onlyOnServer"])
            failure = None if names == ["app", "home", "onboarding"] and only == ["address", "checkout", "login", "modal", "paywall"] else f"{names} {only}"
        except (ValueError, KeyError, IndexError) as error:
            failure = f"not the document: {error}"
        tally.check("diff --json lists the changed flows", failure, result[1][:400])

        result = run(binary, "flows", "diff", flows, "--server", url, "--flags", flags, env=token)
        tally.check("diff --flags names the scaffold's new flag", None if "new        flag onboarding-tour" in result[1] else "not named", result[1])

        # The scaffold goes live as one release, its flag with it.
        result = run(binary, "flows", "push", flows, "--server", url, "--flags", flags, "--activate", env=token)
        tally.check("push --activate exits 0", status_is(0, result), result[1] + result[2])
        tally.check("... and says the release is live", None if " is live: " in result[1] else "not said", result[1])
        status, _, listing = api.call("GET", "/v1/releases", headers=api.admin)
        releases = (listing or {}).get("releases", []) if status == 200 else []
        tally.check("push made one release", None if len(releases) == 1 else f"{len(releases)} releases ({status})", listing)
        first = releases[0] if releases else {}
        tally.check("... that is live", None if first.get("state") == "live" else f"state {first.get('state')}", first)
        tally.check("... holding the three flows", None if sorted(first.get("flows", {})) == ["app", "home", "onboarding"] else "other flows", first)
        tally.check("... with the scaffold's tests run", None if (first.get("tests") or {}).get("passed") == 5 else "not 5 passed", first.get("tests"))
        tally.check("... and its flag", None if first.get("flags") == ["onboarding-tour"] else "other flags", first)
        status, _, flag = api.call("GET", "/v1/flags/onboarding-tour", headers=api.admin)
        tally.check("the pushed flag is on the server", None if status == 200 else f"status {status}", flag)
        status, _, created = api.call("POST", "/v1/sessions", {"userId": "after-push"})
        top = ((created or {}).get("state") or {}).get("top") or {}
        tally.check("a new session starts on the pushed onboarding", None if top.get("feature") == "onboarding.welcome" else f"{status} {top}", created)
        result = run(binary, "flows", "diff", flows, "--server", url, "--flags", flags, "--exit-code", env=token)
        tally.check("after the push, diff --exit-code finds nothing (0)", status_is(0, result), result[1])
        tally.check("... 3 unchanged, the flag too", None if "0 new, 0 changed, 3 unchanged" in result[1]
                    and "flags: 0 new, 0 changed, 1 unchanged" in result[1] else "not said", result[1])
        result = run(binary, "flows", "push", flows, "--server", url, "--flags", flags, "--activate", env=token)
        tally.check("pushing the same files again exits 0", status_is(0, result), result[1] + result[2])
        tally.check("... saying there is nothing to push", None if "nothing to push" in result[1] else "not said", result[1])
        status, _, listing = api.call("GET", "/v1/releases", headers=api.admin)
        tally.check("... and makes no release", None if len((listing or {}).get("releases", [])) == 1 else "a release was made", listing)

        # An edit: a third onboarding screen, pushed as a second release, not activated.
        path = os.path.join(flows, "onboarding.json")
        with open(path) as file:
            onboarding = json.load(file)
        onboarding["on"]["onboarding.next"].append({"from": "onboarding.notifications", "do": [{"push": "onboarding.privacy"}]})
        with open(path, "w") as file:
            json.dump(onboarding, file, indent=2)
        result = run(binary, "flows", "diff", flows, "--server", url, "--exit-code", env=token)
        tally.check("diff --exit-code exits 1 after an edit", status_is(1, result), result[1] + result[2])
        tally.check("... naming the rule added, by its pointer", None if "+ /on/onboarding.next/1:" in result[1] else "not named", result[1])
        result = run(binary, "flows", "push", flows, "--server", url, "--description", "a privacy screen", env=token)
        tally.check("push of the edit exits 0", status_is(0, result), result[1] + result[2])
        status, _, listing = api.call("GET", "/v1/releases", headers=api.admin)
        releases = (listing or {}).get("releases", [])
        newest = releases[0] if releases else {}
        tally.check("the edit is a second release", None if len(releases) == 2 else f"{len(releases)} releases", listing)
        tally.check("... of onboarding alone", None if list(newest.get("flows", {})) == ["onboarding"] else "other flows", newest)
        tally.check("... with the description given", None if newest.get("description") == "a privacy screen" else "other", newest)
        tally.check("... not live", None if newest.get("state") != "live" else "live", newest)
        status, _, live_onboarding = api.call("GET", "/v1/flows/onboarding", headers=api.admin)
        live_onboarding = {key: value for key, value in (live_onboarding or {}).items() if key not in ("version", "live")}
        result = run(binary, "flows", "diff", flows, "--server", url, env=token)
        tally.check("the unactivated edit still differs from the live flow", None if "1 changed" in result[1] else "no change", result[1])

        # Flags alone make no release (a release holds at least one flow): said, exit 3.
        flag_only = os.path.join(work, "flag-only")
        shutil.copytree(app, flag_only)
        with open(os.path.join(flag_only, "flows", "onboarding.json"), "w") as file:
            json.dump(live_onboarding, file)
        with open(os.path.join(flag_only, "flags", "onboarding-tour.json")) as file:
            tour = json.load(file)
        tour["defaultVariant"] = "on"
        with open(os.path.join(flag_only, "flags", "onboarding-tour.json"), "w") as file:
            json.dump(tour, file)
        result = run(binary, "flows", "push", os.path.join(flag_only, "flows"), "--flags", os.path.join(flag_only, "flags"),
                     "--server", url, env=token)
        tally.check("a push of a flag change alone exits 3", status_is(3, result), result[1] + result[2])
        tally.check("... saying why", None if "only flags differ (onboarding-tour)" in result[2] else "not said", result[2])

        # A folder without tests: activating its release needs --untested.
        untested = os.path.join(work, "untested")
        shutil.copytree(app, untested)
        shutil.rmtree(os.path.join(untested, "flows", "tests"))
        with open(os.path.join(untested, "flows", "onboarding.json"), "w") as file:
            json.dump(live_onboarding, file)
        home_path = os.path.join(untested, "flows", "home.json")
        with open(home_path) as file:
            home = json.load(file)
        home["description"] = "Two tabs, untested."
        with open(home_path, "w") as file:
            json.dump(home, file)
        result = run(binary, "flows", "push", os.path.join(untested, "flows"), "--server", url, "--activate", env=token)
        tally.check("push --activate of a release without tests is refused (3)", status_is(3, result), result[1] + result[2])
        tally.check("... and says no tests were sent", None if "tests: none sent" in result[1] else "not said", result[1])
        result = run(binary, "flows", "push", os.path.join(untested, "flows"), "--server", url, "--activate", "--untested", env=token)
        tally.check("push --activate --untested makes it live", status_is(0, result), result[1] + result[2])
        status, _, live_home = api.call("GET", "/v1/flows/home", headers=api.admin)
        tally.check("... the untested home is live", None if (live_home or {}).get("description") == "Two tabs, untested." else "not live", live_home)
        with open(os.path.join(flows, "home.json"), "w") as file:
            json.dump(home, file)  # the scaffold follows, so the pull below round-trips

        # A push whose tests fail: exit 1, nothing activated.
        broken = os.path.join(work, "broken")
        shutil.copytree(app, broken)
        with open(os.path.join(broken, "flows", "tests", "home.json"), "w") as file:
            json.dump({"scenarios": [{"name": "expects the wrong tab", "context": {"user": {"onboarded": True}},
                                      "start": {"expect": {"top": "home.profile"}}}]}, file)
        result = run(binary, "flows", "push", os.path.join(broken, "flows"), "--server", url, "--activate", env=token)
        tally.check("a push whose tests fail exits 1", status_is(1, result), result[1] + result[2])
        tally.check("... naming the failed scenario", None if "FAILED expects the wrong tab" in result[1] else "not named", result[1])
        status, _, live = api.call("GET", "/v1/flows/onboarding", headers=api.admin)
        tally.check("... and activates nothing", None if len(((live or {}).get("on") or {}).get("onboarding.next", [])) == 1 else "activated", live)

        # pull round-trips: the files written equal the live definitions.
        pulled = os.path.join(work, "pulled")
        pulled_flags = os.path.join(work, "pulled-flags")
        result = run(binary, "flows", "pull", pulled, "--server", url, "--flags", pulled_flags, env=token)
        tally.check("pull exits 0", status_is(0, result), result[1] + result[2])
        names = sorted(os.listdir(pulled)) if os.path.isdir(pulled) else []
        tally.check("pull writes every live flow", None if names == ["address.json", "app.json", "checkout.json", "home.json", "login.json", "modal.json", "onboarding.json", "paywall.json"] else f"{names}")
        for name in ("app", "home"):
            with open(os.path.join(pulled, f"{name}.json")) as file, open(os.path.join(flows, f"{name}.json")) as original:
                tally.check(f"pulled {name}.json equals the pushed file as JSON", None if json.load(file) == json.load(original) else "differs")
        with open(os.path.join(pulled_flags, "onboarding-tour.json")) as file, open(os.path.join(flags, "onboarding-tour.json")) as original:
            tally.check("the pulled flag equals the pushed file as JSON", None if json.load(file) == json.load(original) else "differs")
        with open(os.path.join(pulled, "onboarding.json")) as file:
            tally.check("pulled files have no version or live member", None if not {"version", "live"} & set(json.load(file)) else "present")
        result = run(binary, "flows", "diff", pulled, "--server", url, "--exit-code", env=token)
        tally.check("diff of the pulled folder finds nothing", status_is(0, result), result[1] + result[2])
        tally.check("... 8 unchanged", None if "0 new, 0 changed, 8 unchanged, 0 only on the server" in result[1] else "not said", result[1])
        result = run(binary, "flows", "validate", pulled)
        tally.check("the pulled folder validates alone", status_is(0, result), result[1])
    finally:
        server.stop()


def main():
    exit_on_sigterm()
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, ".build/debug/flowstack"))
    tally = Tally()
    with tempfile.TemporaryDirectory() as work:
        app = offline(binary, work, tally)
        online(binary, work, app, tally)
    sys.exit(tally.report("flows_git"))


if __name__ == "__main__":
    main()
