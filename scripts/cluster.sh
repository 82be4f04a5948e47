#!/usr/bin/env bash
# A Spark standalone cluster from the pyspark wheel in .venv, with a Spark Connect server in front of it:
#   scripts/cluster.sh start [DIR]   master + two 1-core workers + Connect server on 127.0.0.1; prints the sc:// URL
#   scripts/cluster.sh stop [DIR]    stops exactly the processes `start` recorded in DIR (and their children)
#   scripts/cluster.sh url [DIR]     prints the sc:// URL of a running cluster
#   scripts/cluster.sh worker-venv [DIR]   only makes the workers' venv (for the user-session test lane)
# The workers' Python is a venv made here WITH pyarrow, pandas, numpy (the versions of .venv) and WITHOUT
# spark_ducklake, so the cluster proves executors need nothing of ours. Idempotent: start on a running cluster
# prints its URL, stop on a stopped one does nothing. Ports are free ones picked at start unless set through
# SPARK_DUCKLAKE_CLUSTER_MASTER_PORT / _CONNECT_PORT; they are kept in DIR/ports.env.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ACTION="${1:-}"
DIR="${2:-${SPARK_DUCKLAKE_CLUSTER_DIR:-${TMPDIR:-/tmp}/spark-ducklake-cluster}}"
PY="$ROOT/.venv/bin/python"
SERVICES=(master worker1 worker2 connect)

die() { echo "cluster.sh: $*" >&2; exit 1; }

alive() {  # pid file -> true when its process is still running
  [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_port() {  # port, service, seconds
  local deadline=$((SECONDS + $3))
  until "$PY" -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), timeout=1).close()" 2>/dev/null; do
    alive "$DIR/$2.pid" || die "$2 exited; see $DIR/logs/$2.log"
    ((SECONDS < deadline)) || die "$2 did not listen on port $1 within $3 s; see $DIR/logs/$2.log"
    sleep 0.5
  done
}

launch() {  # name, command...: a new session per service, so stop can signal its whole process group
  local name="$1"; shift
  setsid "$@" >"$DIR/logs/$name.log" 2>&1 < /dev/null &
  echo $! >"$DIR/$name.pid"
}

worker_venv() {
  local venv="$DIR/worker-venv"
  [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c 'import pyarrow, pandas, numpy' 2>/dev/null && return
  local base
  base="$("$PY" -c 'import sys; print(sys._base_executable)')"
  "$base" -m venv --clear "$venv"
  local pins
  pins="$("$PY" -c 'from importlib.metadata import version as v; print(*(f"{p}=={v(p)}" for p in ("pyarrow", "pandas", "numpy")))')"
  # shellcheck disable=SC2086 - pins is a word list on purpose
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $pins
  if "$venv/bin/python" -c 'import spark_ducklake' 2>/dev/null; then die "the worker venv must not see spark_ducklake"; fi
}

start() {
  mkdir -p "$DIR/logs"
  if alive "$DIR/connect.pid"; then
    cat "$DIR/connect_url"
    return
  fi
  stop >/dev/null
  worker_venv
  local master_port="${SPARK_DUCKLAKE_CLUSTER_MASTER_PORT:-$(free_port)}"
  local connect_port="${SPARK_DUCKLAKE_CLUSTER_CONNECT_PORT:-$(free_port)}"
  local master_ui worker_ui1 worker_ui2
  master_ui="$(free_port)"; worker_ui1="$(free_port)"; worker_ui2="$(free_port)"
  printf 'MASTER_PORT=%s\nCONNECT_PORT=%s\nMASTER_UI=%s\n' "$master_port" "$connect_port" "$master_ui" \
    >"$DIR/ports.env"
  SPARK_HOME="$("$PY" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
  export SPARK_HOME SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_DIRS="$DIR/tmp" SPARK_LOG_DIR="$DIR/logs"
  export PYSPARK_PYTHON="$DIR/worker-venv/bin/python"
  unset SPARK_REMOTE PYSPARK_DRIVER_PYTHON
  mkdir -p "$DIR/tmp"
  local master="spark://127.0.0.1:$master_port"
  launch master "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host 127.0.0.1 --port "$master_port" --webui-port "$master_ui"
  wait_port "$master_port" master 120
  launch worker1 "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 \
    --cores 1 --memory 1500m --webui-port "$worker_ui1" --work-dir "$DIR/work1" "$master"
  launch worker2 "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 \
    --cores 1 --memory 1500m --webui-port "$worker_ui2" --work-dir "$DIR/work2" "$master"
  # The Connect server is the driver; its executors run Python from the worker venv (spark.pyspark.python).
  launch connect "$SPARK_HOME/bin/spark-submit" --class org.apache.spark.sql.connect.service.SparkConnectServer \
    --master "$master" --driver-memory 1g --executor-memory 1g \
    --conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 \
    --conf spark.connect.grpc.binding.address=127.0.0.1 --conf "spark.connect.grpc.binding.port=$connect_port" \
    --conf "spark.pyspark.python=$PYSPARK_PYTHON" --conf spark.ui.enabled=false spark-internal
  wait_port "$connect_port" connect 180
  local deadline=$((SECONDS + 120))
  until "$PY" - "$master_ui" <<'EOF' 2>/dev/null
import json, sys, urllib.request
state = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/json", timeout=2))
sys.exit(0 if state.get("aliveworkers", 0) >= 2 else 1)
EOF
  do
    ((SECONDS < deadline)) || die "workers did not register within 120 s; see $DIR/logs/worker*.log"
    sleep 0.5
  done
  echo "sc://127.0.0.1:$connect_port" >"$DIR/connect_url"
  cat "$DIR/connect_url"
}

stop() {
  local name pid
  for name in connect worker2 worker1 master; do  # reverse start order
    [[ -f "$DIR/$name.pid" ]] || continue
    pid="$(cat "$DIR/$name.pid")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL -- "-$pid" 2>/dev/null || true  # the group: executors and Python workers it started
    fi
    rm -f "$DIR/$name.pid"
  done
  rm -f "$DIR/connect_url"
  echo "stopped (${SERVICES[*]}) in $DIR"
}

case "$ACTION" in
  start) start ;;
  stop) stop ;;
  url) [[ -f "$DIR/connect_url" ]] && alive "$DIR/connect.pid" && cat "$DIR/connect_url" || die "not running" ;;
  worker-venv) mkdir -p "$DIR" && worker_venv && echo "$DIR/worker-venv" ;;
  *) die "usage: scripts/cluster.sh start|stop|url|worker-venv [DIR]" ;;
esac
