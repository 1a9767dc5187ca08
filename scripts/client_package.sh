#!/usr/bin/env bash
# client_package.sh: builds a scratch app package, outside the repo, that adds FlowStackClient
# with one .package(path:) line (clients/swift), as an app would; checks that it resolved no
# package at all (no Package.resolved pin, no checkout) and that the build compiled no server
# module (no libmicrohttpd, libpq, SQLite, GRDB, server store or HTTP server); then, when this repo's
# flowstack binary is built, runs the app against it (start, taps, offline batch, flags).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
. scripts/lib.sh
work=$(mktemp -d /tmp/flowstack-client-app.XXXXXX)
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/app/Sources/ScratchApp"
cat > "$work/app/Package.swift" <<EOF
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ScratchApp",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [.package(path: "$repo/clients/swift")],
    targets: [
        .executableTarget(name: "ScratchApp", dependencies: [.product(name: "FlowStackClient", package: "swift")]),
        // The Swift example of docs/clients.md, compiled as written (not run: its server is an example).
        .executableTarget(name: "ReadmeExample", dependencies: [.product(name: "FlowStackClient", package: "swift")]),
    ]
)
EOF
cat > "$work/app/Sources/ScratchApp/main.swift" <<'EOF'
// An app's first use of FlowStackClient: the README's example.
import FlowStackClient
import Foundation

guard CommandLine.arguments.count > 2, let server = URL(string: CommandLine.arguments[1]) else {
    print("usage: ScratchApp SERVER_URL STORE_PATH")
    exit(0)
}
let session = try await FlowSession.start(.init(
    server: server, userId: "scratch-app",
    client: .init(platform: "linux", appVersion: "1.0.0",
                  features: ["onboarding.first", "onboarding.second", "onboarding.faceScan", "home.first", "home.second", "modal",
                             "login.form", "checkout.cart", "checkout.review", "address.list", "address.form", "address.row", "paywall.offer", "purchase"]),
    store: FileSessionStore(path: CommandLine.arguments[2])))
print("started", session.sessionId, await session.state.features)
while !(await session.hasLocalEngine) { try await Task.sleep(for: .milliseconds(20)) }
_ = try await session.send(FlowAction(type: "onboarding.showSecond"))
await session.setOffline(true)
let home = try await session.send(FlowAction(type: "onboarding.completed"))
await session.setOffline(false)
await session.settled()
let confirmed = await session.confirmedState
print("shown", home.features, "confirmed", confirmed.features, "v\(confirmed.version)", "flag", await session.flags.bool("eu-face-scan", default: false))
guard confirmed == home, confirmed.version == 2 else { print("not confirmed"); exit(1) }
await session.close()
EOF

# The Swift example of docs/clients.md (the block after its readme-swift marker): its imports at the top, the
# rest inside an async throwing function, next to stubs for what an app would have.
mkdir -p "$work/app/Sources/ReadmeExample"
python3 - "$repo/docs/clients.md" "$work/app/Sources/ReadmeExample/main.swift" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
match = re.search(r"<!-- readme-swift:[^>]*-->\n```swift\n(.*?)\n```", text, re.S)
if not match:
    sys.exit("client_package: docs/clients.md has no readme-swift block")
lines = match.group(1).splitlines()
imports = [line for line in lines if line.startswith("import ")]
body = [line for line in lines if not line.startswith("import ")]
stubs = """
enum Screens { static let registered: [String] = [] }
func render(_ plan: NavigationPlan) {}
func tell(_ text: String) {}
func showOffline(_ offline: Bool) {}
"""
with open(sys.argv[2], "w") as out:
    out.write("\n".join(imports) + "\n" + stubs + "\nfunc readmeExample() async throws {\n"
              + "\n".join("    " + line for line in body) + "\n}\n\nif CommandLine.arguments.count > 1 { try await readmeExample() }\n")
PY

echo "client_package: building a scratch app on FlowStackClient in $work/app"
swift build --package-path "$work/app" 2>&1 | tail -3
build="$work/app/.build"
# Nothing but FlowStack's own engine, JSON and client: no pin, no checkout.
pins=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("pins", [])))' "$work/app/Package.resolved" 2>/dev/null || echo 0)
checkouts=$(ls "$build/checkouts" 2>/dev/null | wc -l)
if [ "$pins" != 0 ] || [ "$checkouts" != 0 ]; then
    echo "client_package: adding the client resolved other packages ($pins pins, $checkouts checkouts):" >&2
    cat "$work/app/Package.resolved" >&2 2>/dev/null; ls "$build/checkouts" >&2 2>/dev/null
    exit 1
fi
echo "client_package: resolved nothing besides the client's own package (Package.resolved: ${pins} pins)"
# Every object file and module the build compiled (SwiftPM makes an empty TARGET.build folder for
# every target of the graph; only the compiled files say what was built); none may be a server one.
forbidden='CMicroHTTPD|CPostgres|CGraphviz|SQLiteStore|PostgresStore|GRDB|FlowServer|FlowStore|HTTPServer|FeatureFlags|Crypto|Logging'
found=$(find "$build" \( -name '*.o' -o -name '*.swiftmodule' \) -print | sed "s#^$build/##" \
    | grep -E "(^|/)($forbidden)[^/]*(\.build/|\.o$|\.swiftmodule$)" || true)
if [ -n "$found" ]; then
    echo "client_package: the app's build compiled server modules:" >&2
    echo "$found" >&2
    exit 1
fi
modules=$(find "$build" -name '*.swiftmodule' -path '*Modules*' -exec basename {} .swiftmodule \; | sort -u | tr '\n' ' ')
echo "client_package: modules built: $modules"
for module in FlowStackClient FlowEngine JSON; do
    echo " $modules " | grep -q " $module " || { echo "client_package: $module was not built" >&2; exit 1; }
done

bin="$repo/.build/debug/flowstack"
if [ -x "$bin" ]; then
    "$bin" serve --port 0 --db "$work/db.sqlite" > "$work/serve.log" 2>&1 &
    server_pid=$!
    port=$(listening_port "$work/serve.log")
    [ -n "$port" ] || { echo "client_package: flowstack did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
    "$(swift build --package-path "$work/app" --show-bin-path)/ScratchApp" "http://127.0.0.1:$port" "$work/session.json"
fi
echo "client_package: ok"
