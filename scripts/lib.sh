# Shell helpers shared by the scripts: source it, then call them.

# listening_port LOG: waits up to 10 s for `flowstack serve` to write where it listens into LOG
# and prints the port (nothing if it never does).
listening_port() {
    local log=$1 port="" _
    for _ in $(seq 100); do
        port=$(sed -n 's#^flowstack listening on http://[^:]*:\([0-9]*\).*#\1#p' "$log")
        [ -n "$port" ] && break
        sleep 0.1
    done
    printf '%s' "$port"
}

# release_flowstack: checks that wrk is installed (exit 2 with what to install if not), builds
# flowstack in release and prints the binary's path. For the bench/ scripts.
release_flowstack() {
    command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install -y wrk)" >&2; exit 2; }
    swift build -c release --product flowstack >/dev/null
    printf '%s/flowstack' "$(swift build -c release --show-bin-path)"
}
