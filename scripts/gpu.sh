#!/usr/bin/env bash
# Replaced by scripts/gpu.py (the same parts and environment knobs; its --help): kept for old command lines.
exec python3 "$(dirname "$0")/gpu.py" "$@"
