#!/usr/bin/env bash
# Makes the venv dbt runs in (tests/catalog_service/test_spark_catalog_dbt.py, the `servers` lane): scripts/dbt_venv.sh [DIR],
# DIR defaulting to .venv-dbt in the repo; prints DIR. Idempotent: a DIR that imports dbt-spark, pyspark and
# spark_ducklake is reused. dbt has a venv of its own because dbt-core 1.11 pins protobuf<7, below the one .venv's
# Spark Connect client was installed with (dbt-core 1.12's dependency dbt-core-experimental-parser does not build
# from PyPI alone). Only dbt-core and dbt-spark (without the `session` extra: it is pyspark) are installed here;
# everything else (pyspark, pyarrow, duckdb, ...) is .venv's, reached through a .pth file that appends .venv's
# site-packages AFTER this venv's own: dbt gets its protobuf, the session its pyspark at .venv's version without a
# second 400 MB download. The same .pth puts this repo's src first, so dbt's Spark session and the catalog service
# it starts run this checkout's spark_ducklake. PYTHON names .venv's interpreter (default: the repo's .venv).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${1:-$ROOT/.venv-dbt}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
# dbt-core 1.11.x and dbt-spark 1.11.0 install from PyPI alone (checked with dbt-core 1.11.16, dbt-adapters 1.24.5).
PINS=("dbt-core>=1.11,<1.12" "dbt-spark==1.11.0")

usable() { "$DIR/bin/python" -c 'import dbt.adapters.spark, pyspark, spark_ducklake' 2>/dev/null; }

if [[ -x "$DIR/bin/python" ]] && usable; then
    echo "$DIR"
    exit 0
fi
# The same base interpreter as .venv's: its compiled packages (pyarrow, duckdb) must load in this venv too.
base="$("$PY" -c 'import sys; print(sys._base_executable)')"
main_site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# No pip of its own (half the build time): .venv's pip installs into it (`pip --python`).
"$base" -m venv --without-pip --clear "$DIR"
# Installed before the .pth exists: pip must not see .venv's packages (it would keep .venv's protobuf for dbt).
"$PY" -m pip --python "$DIR/bin/python" install --quiet --disable-pip-version-check "${PINS[@]}"
site="$("$DIR/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# A plain path line for src; addsitedir for .venv so its own .pth files (its editable install) are read too.
printf '%s\nimport site; site.addsitedir(%s)\n' "$ROOT/src" "'$main_site'" >"$site/zz-spark-ducklake-main-venv.pth"
usable || { echo "dbt_venv.sh: $DIR cannot import dbt-spark, pyspark and spark_ducklake" >&2; exit 1; }
echo "$DIR"
