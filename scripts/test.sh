#!/usr/bin/env bash
# The test command: set up from a clean machine, lint, run the whole suite on a local Spark session, then run it
# again with every test moving its data through a Spark Connect server (the multi-process concurrency tests
# already use one, so the second pass leaves them out).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check src tests bench
.venv/bin/python -m pytest -q "$@"
SPARK_DUCKLAKE_TEST_CONNECT=1 .venv/bin/python -m pytest -q --deselect tests/test_concurrency.py "$@"
