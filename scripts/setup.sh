#!/usr/bin/env bash
# Installs the system libraries FlowStack builds against, when they are missing (Debian 12).
set -euo pipefail
missing=()
for package in libmicrohttpd-dev libsqlite3-dev libgraphviz-dev libpq-dev zlib1g-dev libjemalloc-dev pkg-config; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
