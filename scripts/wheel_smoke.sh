#!/usr/bin/env bash
# A plain `pip install` of the built wheel (no extras) into a fresh venv, then the smoke tour on the embedded
# default (SQLite catalog + local folder) on a session built like a user's (no PYSPARK_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d "${TMPDIR:-/tmp}/ducklake-wheel-XXXXXX")"
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" .
# PEP 561: the wheel ships py.typed, so users' type checkers read the package's annotations.
.venv/bin/python -c 'import sys, zipfile; sys.exit("spark_ducklake/py.typed" not in zipfile.ZipFile(sys.argv[1]).namelist())' \
    "$work"/dist/spark_ducklake-*.whl || { echo "the wheel lacks spark_ducklake/py.typed"; exit 1; }
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet "$work"/dist/spark_ducklake-*.whl
# The Python workers Spark starts use `python3` from PATH when PYSPARK_PYTHON is unset: the fresh venv's.
env -u PYSPARK_PYTHON PATH="$work/venv/bin:$PATH" "$work/venv/bin/python" scripts/smoke_tour.py
