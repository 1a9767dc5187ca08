"""Runs the shell and Python blocks of the README, CONTRIBUTING.md and docs/, so that what they tell
a new user stays true, and checks that their links resolve.

    $(scripts/python-tools.sh)/python scripts/readme.py .build/debug/flowstack
    python3 scripts/readme.py --links      # only the links and anchors (no server, a second)
    python3 scripts/readme.py --session    # prints the curl sessions as one script (smoke.sh's)

The pages are read in one order, PAGES (README.md, then the docs pages in the order the README
links them, then CONTRIBUTING.md), followed by any other docs/*.md in name order: blocks run in
that order against one server, so a page may use what an earlier page's blocks made (a client
key's user, a release id), and the curl sessions are one script in that order.

Every ```sh, ```python and ```js block of those pages is accounted for by the line just above it
(a JavaScript block runs with node as an ES module, `@flowstack/client` resolving to clients/js,
against a second server started as the README's first command starts one, without a user secret;
its `// → ` lines are what it must print):
- `<!-- readme-session:begin -->` (closed by `<!-- readme-session:end -->` below the block): part
  of the curl sessions, run by scripts/smoke.sh (on SQLite and on PostgreSQL) and
  scripts/cluster_smoke.sh (three nodes), which take them from `--session`; skipped here.
- `<!-- readme-run -->`: run here, each block as a script of its own, in page order, against a
  server of this script's (a fresh SQLite file, FLOWSTACK_USER_SECRET set so that `userHash` is
  checked) with `localhost:8080` pointing at it and `flowstack` on the PATH, in a folder of its
  own that every block shares.
- `<!-- readme-run: first-line -->`: the first line is run as written, in the repository, with
  FLOWSTACK_PORT=0 (so a busy 8080 cannot fail it); it must start a server that answers
  `/healthz`, which is then stopped. The other lines are not run (`scripts/test.sh` is this run).
- `<!-- readme-not-run: REASON -->`: not run, for the reason given (printed).
A block with none of these fails the run: a new block must say how it stays true.

A run block's `# → ` lines (a line of its own, or the end of a code line) are what it must print,
line for line; a block without them must exit 0 and print no problem document. The environment
gives what the pages tell the user to have: `ADMIN` (the admin token `serve` printed), `KEY` (a
client key, `fsk_…`), `HASH` (the user hash the Python snippet computes; the curl that sends it
must be accepted) and, in Python blocks, the names `KEY`, `secret`, `user_id` and `ADMIN`. A Python block
whose last statement is an expression has its value checked against the `# → ` line, as a REPL
would print it.

Links: every relative link of those pages (`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`,
images too) must name a file or folder of the repository, and an anchor in a Markdown page must be
one of that page's headings as GitHub spells it (or an `id`/`name` it declares).

Prints "readme: N passed, M failed" and exits 1 on a failure. Standard library only, but the
Python blocks import OpenFeature's and GrowthBook's SDKs: run it with the venv's python.
"""
import ast
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, Tally, exit_on_sigterm  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USER_SECRET = "readme-user-secret"
MARKER = re.compile(r"^<!--\s*(readme-[a-z-]+(?::begin)?)(?::\s*(.*?))?\s*-->$")
PROBLEM = re.compile(r'"status"\s*:\s*[45][0-9][0-9]')
# The admin token the README's first command is started with: `serve` refuses one under 32 bytes.
FIRST_LINE_ADMIN_TOKEN = "readme-first-line-admin-token-of-41-bytes"
# The pages whose blocks run, in order: a block may use what an earlier one made (the client-key
# user of clients.md is ada's hash, releases.md's release is id 1 only before flows push makes
# one, operations.md erases the ada the releases signed in), and the curl sessions are one script
# (the A/B walk of releases.md, last, counts every session the others made).
PAGES = ["README.md", "docs/configuration.md", "docs/api.md", "docs/clients.md", "docs/flows.md",
         "docs/releases.md", "docs/operations.md", "docs/guarantees.md", "CONTRIBUTING.md"]


def pages():
    """PAGES, then any other docs/*.md page in name order (a new page is run without being listed)."""
    missing = [page for page in PAGES if not os.path.exists(os.path.join(REPO, page))]
    if missing:
        raise SystemExit(f"readme: {', '.join(missing)} listed in PAGES but missing; update scripts/readme.py")
    docs = os.path.join(REPO, "docs")
    others = sorted(f"docs/{name}" for name in os.listdir(docs) if name.endswith(".md"))
    return PAGES + [page for page in others if page not in PAGES]


class Block:
    def __init__(self, page, line, language, text, marker, argument):
        self.page, self.line, self.language, self.text = page, line, language, text
        self.marker, self.argument = marker, argument

    def name(self):
        return f"{self.page} line {self.line} ({self.language})"

    def expected(self):
        """The `# → ` lines (`// → ` in JavaScript): what the block must print, in order."""
        mark = "// → " if self.language == "js" else "# → "
        lines = []
        for line in self.text.splitlines():
            stripped = line.strip()
            if stripped.startswith(mark):
                lines.append(stripped[len(mark):])
            elif "  " + mark in line:
                lines.append(line.split("  " + mark, 1)[1].strip())
        return lines


def read_blocks(page):
    """A page's ```sh and ```python blocks, each with the marker on the line above it."""
    with open(os.path.join(REPO, page), encoding="utf-8") as file:
        lines = file.read().splitlines()
    blocks, index = [], 0
    while index < len(lines):
        fence = re.match(r"^( *)```(\w*)\s*$", lines[index])  # a block in a list item is indented
        if not fence:
            index += 1
            continue
        indent, language, start = len(fence.group(1)), fence.group(2), index
        end = index + 1
        while end < len(lines) and not lines[end].lstrip(" ").startswith("```"):
            end += 1
        if language in ("sh", "python", "js"):
            above = lines[start - 1].strip() if start > 0 else ""
            match = MARKER.match(above)
            marker, argument = (match.group(1), match.group(2)) if match else (None, None)
            text = "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines[start + 1:end])
            blocks.append(Block(page, start + 1, language, text, marker, argument))
        index = end + 1
    return blocks


def post(port, path, body, token):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def compare(tally, block, output, errors, status):
    """Checks a run block's standard output against its `# → ` lines (or, without any, that it
    printed no problem document), and that it exited 0."""
    name = block.name()
    expected = block.expected()
    printed = output.rstrip("\n").splitlines() if output.strip() else []
    details = ("expected:\n  " + "\n  ".join(expected) + "\n" if expected else "") \
        + "printed:\n  " + "\n  ".join(printed) + (f"\nstandard error:\n{errors}" if errors else "")
    if status != 0:
        tally.check(name, f"exit status {status}", details)
    elif expected and printed != expected:
        tally.check(name, "it printed other lines than its `# → ` lines say", details)
    elif not expected and PROBLEM.search(output):
        tally.check(name, "it printed a problem document", details)
    else:
        tally.check(name, None)


def plain_server(binary, work):
    """A server as the README's first command starts one (no FLOWSTACK_USER_SECRET: user ids are
    not verified), for the JavaScript blocks: a web page's example creates its sessions as an app
    whose backend does not sign user ids would."""
    secret = os.environ.pop("FLOWSTACK_USER_SECRET", None)
    folder = os.path.join(work, "web-server")
    os.makedirs(folder, exist_ok=True)
    try:
        web = FlowStackProcess(binary, folder)
        web.start()
    finally:
        if secret is not None:
            os.environ["FLOWSTACK_USER_SECRET"] = secret
    return web


def run_js(block, port, work):
    """Runs a JavaScript block as an ES module with node, in a folder where `@flowstack/client`
    resolves to clients/js (as an app that added the package has it in node_modules)."""
    modules = os.path.join(work, "node_modules", "@flowstack")
    os.makedirs(modules, exist_ok=True)
    if not os.path.exists(os.path.join(modules, "client")):
        os.symlink(os.path.join(REPO, "clients", "js"), os.path.join(modules, "client"))
    path = os.path.join(work, f"block-{block.line}.mjs")
    with open(path, "w", encoding="utf-8") as file:
        file.write(block.text.replace("localhost:8080", f"127.0.0.1:{port}"))
    done = subprocess.run(["node", path], capture_output=True, text=True, timeout=60, cwd=work)
    return done.stdout, done.stderr, done.returncode


def run_python(block, names):
    """Runs a Python block with `names` defined; its last expression's value is printed (repr)."""
    text = block.text.replace("localhost:8080", f"127.0.0.1:{names['port']}")
    module = ast.parse(text)
    prelude = "".join(f"{name} = {value!r}\n" for name, value in names["values"].items())
    program = prelude + text
    last = module.body[-1] if module.body else None
    printing = isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) \
        and isinstance(last.value.func, ast.Name) and last.value.func.id == "print"
    if isinstance(last, ast.Expr) and not printing:
        body = ast.Module(body=module.body[:-1], type_ignores=[])
        program = prelude + ast.unparse(body) + f"\nprint(repr({ast.unparse(last.value)}))\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                          cwd=REPO)
    return done.stdout, done.stderr, done.returncode


def run_first_line(tally, block, work):
    """The README's first command (a page's, wherever marked), as written, in the repository, on a free port."""
    command = block.text.splitlines()[0].split("  #", 1)[0].strip()
    database = os.path.join(REPO, "flowstack.sqlite")
    existed = os.path.exists(database)
    log = open(os.path.join(work, "first-line.log"), "w+")
    env = dict(os.environ, FLOWSTACK_PORT="0", FLOWSTACK_ADMIN_TOKEN=FIRST_LINE_ADMIN_TOKEN)
    process = subprocess.Popen(["bash", "-c", f"exec {command}" if "&&" not in command else command],
                               cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    port, healthy = None, False
    try:
        deadline = time.monotonic() + 900  # `swift run` may build first
        while time.monotonic() < deadline and process.poll() is None and not healthy:
            time.sleep(0.5)
            log.seek(0)
            found = re.search(r"flowstack listening on http://[^:]*:(\d+)", log.read())
            if found:
                port = found.group(1)
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
                        healthy = answer.status == 200
                except OSError:
                    pass
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if not existed and os.path.exists(database):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(database + suffix):
                    os.remove(database + suffix)
    log.seek(0)
    tally.check(f"{block.page} line {block.line}: `{command}`",
                None if healthy else "no server answering /healthz", log.read()[-3000:])


def session_script():
    """The curl sessions: every block between readme-session markers, in page order, as one
    script (what scripts/smoke.sh and scripts/cluster_smoke.sh run and compare)."""
    parts = []
    for page in pages():
        with open(os.path.join(REPO, page), encoding="utf-8") as file:
            lines = file.read().splitlines()
        inside = None
        for number, line in enumerate(lines, 1):
            if line.strip() == "<!-- readme-session:begin -->":
                if inside:
                    raise SystemExit(f"readme: {page}:{number}: a session begins inside the one of line {inside}")
                inside = number
            elif line.strip() == "<!-- readme-session:end -->":
                if not inside:
                    raise SystemExit(f"readme: {page}:{number}: a session ends that did not begin")
                inside = None
            elif inside and not line.lstrip(" ").startswith("```"):
                parts.append(line)
        if inside:
            raise SystemExit(f"readme: {page}:{inside}: a session that does not end")
    return "\n".join(parts) + "\n"


def slug(heading):
    """A heading's anchor as GitHub makes it: the text without its Markdown, lower case, without
    punctuation but `-` and `_`, spaces as `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def prose(text, blank_code=True):
    """A page's lines outside code blocks (those inside are empty), with inline code blanked unless
    `blank_code` is False (brackets in code are no links; a heading's code is part of its anchor).
    Inline code may go on over a line break, as in Markdown, but not over a blank line."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip(" ").startswith("```"):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line)
    if not blank_code:
        return lines
    joined = re.sub(r"`(?:[^`\n]|\n(?!\n))*`", lambda code: re.sub(r"[^\n]", "", code.group(0)), "\n".join(lines))
    return joined.split("\n")


def anchors(path, cache={}):
    """The anchors of a Markdown file: its headings' slugs (the second of a name gets -1, …) and
    the ids and names it declares."""
    if path not in cache:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        found, seen = set(), {}
        for line in prose(text, blank_code=False):
            heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if heading:
                base = slug(heading.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        found.update(re.findall(r'<a\s+(?:id|name)="([^"]+)"', text))
        cache[path] = found
    return cache[path]


LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def check_links(tally):
    """Every relative link and anchor of the README, CONTRIBUTING.md and docs/*.md resolves."""
    for page in ["README.md", "CONTRIBUTING.md"] + [p for p in pages() if p.startswith("docs/")]:
        path = os.path.join(REPO, page)
        with open(path, encoding="utf-8") as file:
            lines = prose(file.read())
        problems = []
        for number, line in enumerate(lines, 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
                    continue
                file_part, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(resolved):
                    problems.append(f"line {number}: {target}: no such file {os.path.relpath(resolved, REPO)}")
                elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                    problems.append(f"line {number}: {target}: {os.path.relpath(resolved, REPO)} has no heading "
                                    f"#{anchor}")
        tally.check(f"{page}: links and anchors", "; ".join(problems) if problems else None)


def main():
    exit_on_sigterm()
    if sys.argv[1:] == ["--session"]:
        sys.stdout.write(session_script())
        return
    if sys.argv[1:] == ["--links"]:
        tally = Tally()
        check_links(tally)
        sys.exit(tally.report("readme-links"))
    if len(sys.argv) != 2:
        raise SystemExit("usage: readme.py FLOWSTACK_BINARY | --links | --session")
    binary = os.path.abspath(sys.argv[1])
    tally = Tally()
    check_links(tally)
    session_script()  # its markers pair up, or the run stops here
    blocks = [block for page in pages() for block in read_blocks(page)]
    with tempfile.TemporaryDirectory() as work:
        bin_dir = os.path.join(work, "bin")
        os.mkdir(bin_dir)
        os.symlink(binary, os.path.join(bin_dir, "flowstack"))
        os.environ["FLOWSTACK_USER_SECRET"] = USER_SECRET
        server = FlowStackProcess(binary, work)
        web = None
        try:
            server.start()
            key = post(server.port, "/v1/client-keys", {"name": "readme"}, server.admin_token)["key"]
            names = {"port": server.port, "values": {"KEY": key, "secret": USER_SECRET, "user_id": "ada", "ADMIN": server.admin_token}}
            env = dict(os.environ, ADMIN=server.admin_token, KEY=key, PATH=bin_dir + os.pathsep + os.environ["PATH"])
            for block in blocks:
                where = block.name()
                if block.marker == "readme-session:begin":
                    continue
                if block.marker == "readme-not-run":
                    tally.check(where, None if block.argument else "readme-not-run without a reason")
                    print(f"readme: {block.page} line {block.line} not run: {block.argument}")
                    continue
                if block.marker != "readme-run":
                    tally.check(where, "neither run nor marked; put <!-- readme-run --> or "
                                "<!-- readme-not-run: why --> on the line above it")
                    continue
                if block.argument == "first-line":
                    run_first_line(tally, block, work)
                    continue
                if block.language == "js":
                    if web is None:
                        web = plain_server(binary, work)
                    output, errors, status = run_js(block, web.port, work)
                elif block.language == "python":
                    output, errors, status = run_python(block, names)
                    # The user-hash snippet's digest; a later block that also calls hmac.new (the
                    # rollout's users) prints something else, which is no hash.
                    digest = output.strip().strip("'")
                    if "hmac.new" in block.text and status == 0 and re.fullmatch(r"[0-9a-f]{64}", digest):
                        env["HASH"] = digest
                else:
                    script = block.text.replace("localhost:8080", f"127.0.0.1:{server.port}")
                    done = subprocess.run(["bash", "-c", "set -o pipefail\n" + script], capture_output=True,
                                          text=True, env=env, cwd=work, timeout=120)
                    output, errors, status = done.stdout, done.stderr, done.returncode
                compare(tally, block, output, errors, status)
        finally:
            server.stop()
            if web is not None:
                web.stop()
    sys.exit(tally.report("readme"))


if __name__ == "__main__":
    main()
