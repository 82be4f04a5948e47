#!/usr/bin/env bash
# The main job: set up from a clean machine and run the demo on the embedded default (SQLite + local folder).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
.venv/bin/spark-ducklake demo "$@"
