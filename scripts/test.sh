#!/usr/bin/env bash
# The test command: set up from a clean machine, lint, run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check src tests bench
.venv/bin/python -m pytest -q "$@"
