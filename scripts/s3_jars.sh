#!/usr/bin/env bash
# Fetches the s3a jars for Spark's tests offline-friendly, from PyPI: the sagemaker-pyspark 1.4.5 sdist carries
# hadoop-aws-3.3.1 and aws-java-sdk-bundle-1.11.901 (no PyPI/Debian package ships hadoop-aws 3.4+/3.5). They work
# with pyspark 4.3's Hadoop 3.5 given the settings in tests/s3_support.py. Prints the comma-separated jar paths
# (what `spark.jars` / SPARK_DUCKLAKE_S3_JARS take). Cache: $SPARK_DUCKLAKE_JARS_DIR (default ~/.cache/spark-ducklake/jars).
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${SPARK_DUCKLAKE_JARS_DIR:-$HOME/.cache/spark-ducklake/jars}"
python="${PYTHON:-.venv/bin/python}"
[[ -x "$python" ]] || python=python3
want=(hadoop-aws-3.3.1.jar aws-java-sdk-bundle-1.11.901.jar)
have() { for j in "${want[@]}"; do [[ -s "$cache/$j" ]] || return 1; done; }
if ! have; then
  mkdir -p "$cache"
  tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
  "$python" -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" sagemaker-pyspark==1.4.5 >&2
  tar -xzf "$tmp"/sagemaker_pyspark-1.4.5.tar.gz -C "$tmp"
  for j in "${want[@]}"; do
    src="$(find "$tmp" -name "$j" | head -1)"
    [[ -n "$src" ]] || { echo "s3_jars: $j not in the sdist" >&2; exit 1; }
    cp "$src" "$cache/$j"
  done
fi
paths=(); for j in "${want[@]}"; do paths+=("$cache/$j"); done
(IFS=,; echo "${paths[*]}")
