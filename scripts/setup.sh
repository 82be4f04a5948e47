#!/usr/bin/env bash
# Creates .venv and installs spark-ducklake with the given extras (default: test; `bench` for the benchmark
# suite's peers, `test,bench` for both). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-test}"
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[${extras}]"
bash scripts/build_jar.sh  # the optional JVM file index (shipped in the wheel; skipped without a JDK)
