"""Id lists in chunks for the short maintenance transactions (expire, cleanup), which change no snapshot and run
in `catalog.database.transactions.write_transaction`: queued behind committing writers, holding their lock."""

from __future__ import annotations

CHUNK = 500  # ids per IN (...) list: far below every dialect's parameter limit


def chunks(ids: list[int]):
    """`ids` in slices small enough for one IN list."""
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]
