"""The catalog service's process and request loop: `python -m spark_ducklake.catalog_service` (__main__.py) reads
the plugin's options as one JSON line on standard input (catalog url, data path, attach options: secrets never
reach a command line), answers with one JSON line on standard output (`{"port": ..., "token": ...}`), then serves
HTTP/JSON on 127.0.0.1 at that port, each request (`POST /`, a JSON object) carrying the token; it ends when its
standard input closes (the JVM exited or closed the pipe), so it never outlives its Spark process."""

from __future__ import annotations

import hmac
import json
import secrets
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import DuckLakeError
from .conf import attach
from .service import CatalogService

TOKEN_HEADER = "X-DuckLake-Token"


def _handler(service: CatalogService, token: str):
    class Handler(BaseHTTPRequestHandler):
        # Persistent connections: the JVM's client pools them, and a server closing each one after its answer
        # races with the client's reuse of it (a request then fails with no answer at all).
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            if not hmac.compare_digest(self.headers.get(TOKEN_HEADER, ""), token):
                self._reply(403, {"error": {"kind": "error", "message": "bad token"}})
                return
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            except ValueError:
                self._reply(400, {"error": {"kind": "error", "message": "the request is not JSON"}})
                return
            self._reply(200, service.answer(request))

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args) -> None:  # requests are not logged: they name tables, never secrets
            return

    return Handler


def serve(config: dict[str, Any], out=sys.stdout, until=sys.stdin) -> None:
    """Serve one lake until `until` closes, after writing the port and token as one JSON line to `out`."""
    lake = attach(config)
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="spark-ducklake-catalog-") as logs:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(CatalogService(lake, logs), token))
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        out.write(json.dumps({"port": server.server_address[1], "token": token}) + "\n")
        out.flush()
        try:
            while until.readline():  # the parent holds the pipe open; EOF means it is gone
                pass
        finally:
            server.shutdown()
            lake.close()


def main() -> None:
    """`python -m spark_ducklake.catalog_service` (__main__.py): read the configuration line from stdin, then serve."""
    line = sys.stdin.readline()
    try:
        config = json.loads(line)
        serve(config)
    except (ValueError, DuckLakeError) as e:
        print(json.dumps({"error": {"kind": "error", "message": str(e)}}), flush=True)
        sys.exit(1)
