"""Time-ordered UUIDs (v7) like the reference's, for schema/table/view uuids and file names.

Standard library only: Spark tasks that name the files they write import it without the catalog's dependencies."""

from __future__ import annotations

import os
import time
import uuid


def new_uuid() -> str:
    """A time-ordered UUID (v7) as text."""
    if hasattr(uuid, "uuid7"):  # Python 3.14+
        return str(uuid.uuid7())
    ms = int(time.time() * 1000)
    rand = bytearray(os.urandom(10))
    raw = ms.to_bytes(6, "big") + bytes([0x70 | (rand[0] & 0x0F), rand[1], 0x80 | (rand[2] & 0x3F)]) + rand[3:]
    return str(uuid.UUID(bytes=bytes(raw)))
