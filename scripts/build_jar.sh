#!/usr/bin/env bash
# Compiles the optional file index (src/spark_ducklake/dataplane/spark/jvm/DuckLakeFileList.java) against the installed
# pyspark's jars into spark-ducklake-index.jar next to it (shipped in the wheel), and the Spark catalog plugin
# (DuckLakeCatalog.java and the folder's other .java files: lake tables in plain Spark SQL) into
# spark-ducklake-catalog.jar. Without a JDK it does nothing: scans then take the pure-Python route (a file-sink log
# read by Spark's own index) and there is no plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"
src=src/spark_ducklake/dataplane/spark/jvm
if ! command -v javac >/dev/null || ! command -v jar >/dev/null; then
    echo "build_jar: no javac/jar on PATH; the JVM file index is not built" >&2
    exit 0
fi
jars="$("$python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
work="$(mktemp -d "${TMPDIR:-/tmp}/ducklake-jar-XXXXXX")"
trap 'rm -rf "$work"' EXIT
javac --release 17 -nowarn -d "$work" -cp "$jars/*" "$src/DuckLakeFileList.java"
jar --create --file "$src/spark-ducklake-index.jar" -C "$work" .
# The plugin is a jar of its own: the index keeps working should it fail to compile against another Spark.
plugin="$(mktemp -d "${TMPDIR:-/tmp}/ducklake-jar-XXXXXX")"
trap 'rm -rf "$work" "$plugin"' EXIT
# Every .java of the folder but the index's is the plugin's (DuckLakeCatalog.java, DuckLakeProcedures.java, ...).
plugin_sources=()
for f in "$src"/*.java; do
    [ "$(basename "$f")" = DuckLakeFileList.java ] || plugin_sources+=("$f")
done
if javac --release 17 -nowarn -d "$plugin" -cp "$jars/*" "${plugin_sources[@]}"; then
    jar --create --file "$src/spark-ducklake-catalog.jar" -C "$plugin" .
else
    echo "build_jar: the catalog plugin did not compile against this pyspark; it is not built" >&2
fi
