#!/usr/bin/env bash
# Starts a throwaway local Redis for the channel-layer tests unless one already answers.
set -euo pipefail
port="${REDIS_PORT:-6379}"
if ! redis-cli -p "$port" ping >/dev/null 2>&1; then
    redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi
