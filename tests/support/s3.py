"""The local S3 server the object-storage tests use (scripts/s3.sh), Spark's s3a settings for it, and a proxy on
127.0.0.1 that counts the requests passing through it."""

from __future__ import annotations

import http.client
import os
import socket
import threading
from collections import Counter
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PORT = int(os.environ.get("SPARK_DUCKLAKE_S3_PORT", "8333"))
ENDPOINT = f"http://127.0.0.1:{PORT}"
BUCKET = "lake"
# What scripts/s3.sh starts the server with when the keys are not in the environment.
DEFAULT_KEYS = ("ducklake-test", "ducklake-test-secret")


def env_defaults() -> None:
    """The standard AWS variables pointing at the local server (kept when already set)."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", DEFAULT_KEYS[0])
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", DEFAULT_KEYS[1])
    os.environ.setdefault("AWS_ENDPOINT_URL", ENDPOINT)
    os.environ.setdefault("AWS_REGION", "us-east-1")


def problem() -> str | None:
    """Why the S3 server cannot be used here (None: it can)."""
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    except OSError as exc:
        return f"S3 server not reachable at {ENDPOINT} (scripts/s3.sh start): {exc}"
    if not os.environ.get("SPARK_DUCKLAKE_S3_JARS"):
        return "SPARK_DUCKLAKE_S3_JARS is not set (export SPARK_DUCKLAKE_S3_JARS=$(scripts/s3_jars.sh))"
    return None


def s3a_conf(endpoint: str = ENDPOINT) -> dict[str, str]:
    """Hadoop s3a settings for the local server. The timeouts are the ones hadoop-aws 3.3.1 parses on Hadoop
    3.5 (its defaults there say "60s", which 3.3.1 cannot read); keys come from the environment, never a conf."""
    return {
        "fs.s3a.endpoint": endpoint,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.aws.credentials.provider": "com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
        "fs.s3a.threads.keepalivetime": "60",
        "fs.s3a.connection.establish.timeout": "30000",
        "fs.s3a.connection.timeout": "200000",
        "fs.s3a.multipart.purge.age": "86400",
        "fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
    }


def submit_args(endpoint: str = ENDPOINT) -> str:
    """PYSPARK_SUBMIT_ARGS giving a new local session the s3a jars and settings (for the server at `endpoint`)."""
    jars = os.environ["SPARK_DUCKLAKE_S3_JARS"]
    confs = " ".join(f"--conf spark.hadoop.{k}={v}" for k, v in s3a_conf(endpoint).items())
    return f"--jars {jars} {confs} pyspark-shell"


def request_kind(method: str, target: str) -> str:
    """HEAD / GET / PUT / POST / DELETE, with bucket listings as LIST."""
    parts = urlsplit(target)
    query = parse_qs(parts.query, keep_blank_values=True)
    key = parts.path.lstrip("/").partition("/")[2]
    if method == "GET" and ("list-type" in query or "prefix" in query or "delimiter" in query or not key):
        return "LIST"
    return method


class CountingProxy:
    """An HTTP proxy on 127.0.0.1 in front of the S3 server that counts requests by kind. Headers pass verbatim
    (SigV4 signs the Host the client used, and the server checks that same Host)."""

    def __init__(self, upstream_port: int = PORT):
        self.counts: Counter[str] = Counter()
        self.log: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> bytes | None:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raw = bytearray()
                    while True:
                        line = self.rfile.readline()
                        raw += line
                        size = int(line.split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while True:  # trailers up to the empty line
                                tail = self.rfile.readline()
                                raw += tail
                                if tail in (b"\r\n", b"\n", b""):
                                    return bytes(raw)
                        raw += self.rfile.read(size + 2)
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else None

            def _forward(self):
                body = self._body()
                with proxy._lock:
                    proxy.counts[request_kind(self.command, self.path)] += 1
                    proxy.log.append((self.command, self.path))
                conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=300)
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    conn.putheader(name, value)
                conn.endheaders()
                if body:
                    conn.send(body)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response_only(resp.status, resp.reason)
                head = self.command == "HEAD"  # a HEAD's Content-Length is the object's size: pass it on
                for name, value in resp.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection") and (
                            head or name.lower() != "content-length"):
                        self.send_header(name, value)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not head:
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    @contextmanager
    def counting(self):
        """Counts (by kind) of the requests made inside the block."""
        with self._lock:
            before = Counter(self.counts)
        result: Counter[str] = Counter()
        yield result
        with self._lock:
            result.update(self.counts - before)


class FreezableProxy:
    """A TCP forwarder on 127.0.0.1 in front of the S3 server that can be frozen: connections are still accepted
    (as by a stopped server's kernel) and nothing more passes either way until it thaws, in-flight requests
    included."""

    def __init__(self, upstream_port: int = PORT):
        self._upstream_port = upstream_port
        self._thawed = threading.Event()
        self._thawed.set()
        self._closed = False
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self._thawed.clear()

    def thaw(self) -> None:
        self._thawed.set()

    def close(self) -> None:
        """Stop listening and drop every connection (the server is down: connections are refused)."""
        self._closed = True
        self._thawed.set()
        for sock in [self._listener, *self._sockets]:
            try:
                sock.close()
            except OSError:
                pass

    def __enter__(self) -> FreezableProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._sockets.append(client)
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        self._thawed.wait()
        try:
            upstream = socket.create_connection(("127.0.0.1", self._upstream_port))
        except OSError:
            client.close()
            return
        self._sockets.append(upstream)
        threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
        self._pump(upstream, client)

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._thawed.wait()
                if self._closed:
                    break
                target.sendall(data)
        except OSError:
            pass
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
