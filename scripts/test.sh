#!/usr/bin/env bash
# The test command: set up from a clean machine, lint, then run every lane CI runs. Each lane runs even when an
# earlier one failed; the script fails if any lane failed. Extra arguments go to every pytest call.
#   1 catalog   the tests that need no Spark (not marked `spark`), with Spark forbidden: a test that starts a
#               session there fails (tests/conftest.py)
#   2 local     the tests marked `spark` (those asking for the `spark` fixture) on a local Spark session we start,
#               in two halves run side by side (local1: tests/*/test_[a-e]*.py, local2: the rest but the plugin's)
#   2b plugin   the catalog plugin's Spark SQL tests (tests/catalog_service/ but the servers lane's)
#   3 connect   the `spark` tests again, every test moving its data through a Spark Connect server (small-data
#               threshold 0: nothing takes the in-process pyarrow path)
#   4 user      interop and row-level tests on a session built like a user's (hostile confs, Spark's defaults,
#               no PYSPARK_PYTHON, Python workers without this package)
#   5 cluster   the README tour and more on a standalone cluster behind Spark Connect (scripts/cluster.sh)
#   5b servers  the catalog plugin's tour (docs/catalog-tour.sql) through a Spark Connect server and the Spark
#               Thrift Server (with beeline) started with the plugin's jar, and dbt-spark's models on lake tables
#               (tests marked `servers`; dbt in its own venv, scripts/dbt_venv.sh)
#   6 s3        storage tests with data on a local S3 server (scripts/s3.sh)
#   7 wheel     the wheel, installed with no extras into a fresh venv, runs scripts/smoke_tour.py
#   8 workers   the tests marked `python_workers`, on a local session and over Spark Connect side by side, after
#               the other lanes: Spark gives a non-daemon Python worker a fixed 10 s to start and connect back, and
#               on two cores busy with four lanes that start took longer (the local and Connect lanes skip them)
# SPARK_DUCKLAKE_LANES="catalog local" runs a subset (`local` is both halves).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test || exit 1
.venv/bin/ruff check src tests bench scripts || exit 1
.venv/bin/lint-imports || exit 1
.venv/bin/mypy || exit 1  # configured in pyproject.toml ([tool.mypy])
# The tests' JVMs compile with C1 only and collect with the serial GC: their queries are short, and on two cores
# C2's compiler threads and G1's workers cost more CPU than they save (2026-11-29, MERGE, DELETE and compaction
# tests: 44 % less machine CPU, 26 % less time). Spark sessions outside this script keep the JVM's defaults.
export JAVA_TOOL_OPTIONS="${JAVA_TOOL_OPTIONS:+$JAVA_TOOL_OPTIONS }-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

lanes=""
for lane in ${SPARK_DUCKLAKE_LANES:-catalog local plugin connect user cluster servers s3 wheel workers}; do
    [ "$lane" = local ] && lanes+=" local1 local2" || lanes+=" $lane"
done
pytest=(.venv/bin/python -m pytest -q --durations=25)
state="$(mktemp -d "${TMPDIR:-/tmp}/ducklake-lanes-XXXXXX")"
failed=()
cleanup() {
    bash scripts/cluster.sh stop "$state/cluster" >/dev/null 2>&1 || true
    SPARK_DUCKLAKE_S3_DIR="$state/s3" bash scripts/s3.sh stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

run_lane() {  # run_lane NAME COMMAND...: time one lane, record its exit status in $state/NAME.rc
    local name="$1" start=$SECONDS
    shift
    echo "=== lane $name"
    "$@"
    local rc=$?
    # pytest's 5 means no test ran: a lane that selects nothing is a broken lane, not a pass.
    echo "$rc" >"$state/$name.rc"
    echo "=== lane $name: exit $rc in $((SECONDS - start)) s"
}

lane_catalog() { SPARK_DUCKLAKE_TEST_NO_SPARK=1 "${pytest[@]}" -m "not spark and not cluster and not s3" "$@"; }
# pytest on the local Spark session: per-backend `catalog` cases on SQLite and PostgreSQL, on all four for the
# tests marked `every_backend` (the interop ones); the catalog lane runs every test on every backend.
pytest_local() { SPARK_DUCKLAKE_TEST_BACKENDS_UNMARKED=sqlite,postgres "${pytest[@]}" "$@"; }
# pytest over Spark Connect, small-data threshold 0: every operation moves its data through Connect, none takes the
# in-process pyarrow path the other lanes (and users) get for small data. Tests with a `catalog` case per backend
# run on SQLite only: the backend does not change how data moves.
pytest_connect() {
    SPARK_DUCKLAKE_SMALL_DATA_BYTES=0 SPARK_DUCKLAKE_TEST_CONNECT=1 SPARK_DUCKLAKE_TEST_BACKENDS=sqlite \
        "${pytest[@]}" "$@"
}
lane_local() { pytest_local -m "spark and not cluster and not s3 and not servers and not python_workers" "$@"; }
lane_local1() { lane_local tests/*/test_[a-e]*.py "$@"; }
lane_local2() { lane_local --ignore-glob='*/test_[a-e]*.py' --ignore-glob='*/catalog_service/*' "$@"; }
# The catalog plugin's tests (one shared child JVM, tests/support/plugin_session.py), the servers lane's aside.
lane_plugin() { lane_local tests/catalog_service "$@"; }
lane_connect() {
    # Tests marked `own_session` (the catalog plugin's, a JVM class, and those starting Connect servers of their
    # own) would run the same again over Connect.
    pytest_connect -m "spark and not cluster and not s3 and not own_session and not python_workers" \
        --deselect tests/catalog/test_concurrency.py "$@"
}
lane_user() {
    bash scripts/cluster.sh worker-venv "$state/cluster" >/dev/null || return 1
    # Tests with a `catalog` case per backend run on SQLite only, as in the Connect lane.
    SPARK_DUCKLAKE_TEST_SESSION=user SPARK_DUCKLAKE_WORKER_VENV="$state/cluster/worker-venv" SPARK_DUCKLAKE_TEST_BACKENDS=sqlite \
        "${pytest[@]}" tests/deployment/test_user_session.py tests/interop/test_interop.py tests/operations/test_delete.py \
        tests/operations/test_merge.py tests/operations/test_transaction.py tests/operations/test_flush.py \
        tests/operations/test_partitioning.py tests/deployment/test_readme_tour.py "$@"
}
lane_cluster() {
    local url
    url="$(bash scripts/cluster.sh start "$state/cluster" | tail -n 1)" || return 1
    # The tour and the cluster tests, every test's data moving through the cluster's Connect server.
    SPARK_REMOTE="$url" SPARK_DUCKLAKE_CLUSTER_URL="$url" SPARK_DUCKLAKE_TEST_CONNECT=1 SPARK_DUCKLAKE_TEST_CLUSTER=1 \
        "${pytest[@]}" tests/deployment/test_cluster.py tests/deployment/test_readme_tour.py "$@"
    local rc=$?
    bash scripts/cluster.sh stop "$state/cluster"
    return $rc
}
# Servers of Spark's own (Connect, Thrift) each started once with the catalog plugin's confs, as a user starts them,
# and dbt-spark's session method on lake tables, dbt in a venv of its own (.venv-dbt, kept between runs).
lane_servers() {
    local dbt_venv
    dbt_venv="$(bash scripts/dbt_venv.sh | tail -n 1)" || return 1
    SPARK_DUCKLAKE_DBT_VENV="$dbt_venv" "${pytest[@]}" -m servers "$@"
}
lane_s3() {
    local jars
    jars="$(bash scripts/s3_jars.sh | tail -n 1)" || return 1
    SPARK_DUCKLAKE_S3_DIR="$state/s3" bash scripts/s3.sh start || return 1
    SPARK_DUCKLAKE_TEST_S3=1 SPARK_DUCKLAKE_S3_JARS="$jars" "${pytest[@]}" -m s3 "$@"
    local rc=$?
    SPARK_DUCKLAKE_S3_DIR="$state/s3" bash scripts/s3.sh stop
    return $rc
}
lane_wheel() { bash scripts/wheel_smoke.sh; }
lane_workers() {  # locally and over Connect, side by side
    local log="$state/workers-connect.log" connect rc=0
    pytest_connect -m "spark and python_workers and not own_session" "$@" >"$log" 2>&1 &
    connect=$!
    pytest_local -m "spark and python_workers" "$@" || rc=$?
    wait "$connect" || rc=$?
    echo "--- the same tests over Spark Connect:"
    cat "$log"
    return $rc
}

run_group() {  # run_group LANE...: the lanes one after another
    local lane
    for lane in "$@"; do run_lane "$lane" "lane_$lane" "${pytest_args[@]}"; done
}

pytest_args=("$@")
start=$SECONDS
if [ -n "${SPARK_DUCKLAKE_SERIAL:-}" ]; then
    run_group $lanes
else
    groups=()
    # Four groups that take about as long each on 2 cores; the lanes are CPU-bound, so the times follow the
    # machine's speed. A clean clone on 2026-11-29, JVMs C1-only, took 2,270 s in all: local1 1,447 s, s3 251,
    # plugin 292, wheel 73 | connect 1,889 | catalog 1,063, user 506, cluster 112, servers 300 | local2 1,978;
    # then workers 207 s.
    # User and cluster share the worker venv, so they run one after the other.
    for group in "local1 s3 plugin wheel" "connect" "catalog user cluster servers" "local2"; do
        selected=()
        for lane in $group; do [[ " $lanes " == *" $lane "* ]] && selected+=("$lane"); done
        [ "${#selected[@]}" -gt 0 ] || continue
        log="$state/group-${#groups[@]}.log"
        run_group "${selected[@]}" >"$log" 2>&1 &
        groups+=("$!:$log")
    done
    for entry in "${groups[@]}"; do
        wait "${entry%%:*}"
        cat "${entry#*:}"
    done
    [[ " $lanes " == *" workers "* ]] && run_group workers
fi

for lane in $lanes; do
    rc="$(cat "$state/$lane.rc" 2>/dev/null || echo missing)"
    [ "$rc" = 0 ] || failed+=("$lane (exit $rc)")
done
echo "=== all lanes in $((SECONDS - start)) s"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED lanes: ${failed[*]}"
    exit 1
fi
echo "all lanes passed: $lanes"
