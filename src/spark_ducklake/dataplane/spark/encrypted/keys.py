"""File keys of encrypted lakes on their way to the executors, out of every Spark plan.

A plan's text reaches places that are not secret: a Spark Connect server writes each plan (local relations' rows and
pickled functions included) into its event log and UI, and a classic plan's string shows literals. So a file key
that executors need (to decrypt a data or delete file, or to encrypt a restamped one) travels wrapped: XORed with
HMAC-SHA256(session secret, random nonce), as base64 of nonce + wrapped key. The session secret is made once per
Spark session and reaches the executors as a session file artifact (`addArtifacts(file=True)`; tasks read it with
`SparkFiles.get`), never as a plan, option or conf. A wrapped key is no use without that file.

The secret is written 0600 in a private 0700 temp directory; over Spark Connect the file is uploaded and removed at
once, on a classic session Spark serves it from that path to executors that start later, so it is removed when the
process exits.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import hmac
import os
import shutil
import tempfile
import threading
import uuid
import weakref

_SECRET_BYTES = 32
_NONCE_BYTES = 16
_lock = threading.Lock()
_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> (artifact name, secret)
_unweakable: dict = {}  # sessions that cannot be weakly referenced, by id
_read: dict[str, bytes] = {}  # executor side: artifact name -> secret


def _pad(secret: bytes, nonce: bytes, size: int) -> bytes:
    """`size` bytes of keystream for one key: HMAC-SHA256 blocks of (nonce, counter)."""
    blocks = (hmac.new(secret, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest() for i in range(size // 32 + 1))
    return b"".join(blocks)[:size]


def _xor(data: bytes, pad: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def _ship(spark) -> tuple[str, bytes]:
    """A fresh session secret, added to `spark` as a file artifact of a unique name."""
    secret = os.urandom(_SECRET_BYTES)
    name = f"spark-ducklake-keys-{uuid.uuid4().hex}.bin"
    folder = tempfile.mkdtemp(prefix="spark-ducklake-keys-")  # 0700
    path = os.path.join(folder, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(secret)
    try:
        spark.addArtifacts(path, file=True)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if hasattr(spark, "_jsparkSession"):  # classic: executors fetch the file from this path, maybe later
        atexit.register(shutil.rmtree, folder, True)
    else:  # Spark Connect: the server holds its own copy now
        shutil.rmtree(folder, ignore_errors=True)
    return name, secret


def _session_secret(spark) -> tuple[str, bytes]:
    with _lock:
        try:
            found = _sessions.get(spark)
        except TypeError:  # not weak-referenceable
            found = _unweakable.get(id(spark))
        if found is None:
            found = _ship(spark)
            try:
                _sessions[spark] = found
            except TypeError:
                _unweakable[id(spark)] = found
        return found


def wrap_keys(spark, keys: list[str]) -> tuple[str, list[str]]:
    """(artifact name, each base64 file key wrapped) for tasks of `spark` to unwrap with `unwrap_key`."""
    name, secret = _session_secret(spark)
    wrapped = []
    for key in keys:
        raw = base64.b64decode(key)
        nonce = os.urandom(_NONCE_BYTES)
        wrapped.append(base64.b64encode(nonce + _xor(raw, _pad(secret, nonce, len(raw)))).decode())
    return name, wrapped


def unwrap_key(name: str, wrapped: str) -> str:
    """On an executor: the base64 file key `wrapped` holds, under the session secret in artifact `name`."""
    secret = _read.get(name)
    if secret is None:
        from pyspark import SparkFiles

        with open(SparkFiles.get(name), "rb") as fh:
            secret = _read[name] = fh.read()
    data = base64.b64decode(wrapped)
    nonce, body = data[:_NONCE_BYTES], data[_NONCE_BYTES:]
    return base64.b64encode(_xor(body, _pad(secret, nonce, len(body)))).decode()
