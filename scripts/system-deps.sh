#!/usr/bin/env bash
# Installs the Debian packages the test suite and benchmarks need (Chromium, the Python
# documentation) when they are missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
# benchmarks/source_sync.py crawls the Python documentation served locally.
[ -f /usr/share/doc/python3.11/html/index.html ] || missing+=(python3.11-doc)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
