"""A data file's deleted positions applied as a Spark filter on a bitmap literal: no join, no Spark job.

An anti-join with the positions costs every query a broadcast exchange (collecting, hashing and shipping the
positions again) and a join per row. A bitmap of the deleted positions (one bit per row
up to the last deleted one, in 64-bit words) travels in the plan instead, as one string literal that the optimizer
folds once into an array<bigint>; each row then costs an array read and a bit test.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Positions below 8.4M (TPC-H SF1's whole lineitem is 6M rows): the plan carries each word as ~20 bytes of text,
# folded by every query's optimizer, so bigger bitmaps (files deleted from past that) go to the join instead.
MAX_WORDS = 1 << 17


def bitmap_words(positions: pa.Array) -> np.ndarray:
    """Bit `p % 64` of word `p // 64` set for every deleted position `p` (int64 words; empty for no positions)."""
    pos = np.asarray(positions.to_numpy(zero_copy_only=False), dtype=np.int64)
    if len(pos) == 0:
        return np.zeros(0, dtype=np.int64)
    if pos.min() < 0:
        raise ValueError(f"a deleted row position is negative ({int(pos.min())}): the delete file is corrupt")
    words = np.zeros(int(pos.max() >> 6) + 1, dtype=np.uint64)
    np.bitwise_or.at(words, pos >> 6, np.left_shift(np.uint64(1), (pos & 63).astype(np.uint64)))
    return words.view(np.int64)


def fits(positions: pa.Array) -> bool:
    """Whether the bitmap of these positions is small enough to ride in a query plan."""
    return len(positions) == 0 or (int(pc.max(positions).as_py()) >> 6) < MAX_WORDS


def not_deleted(positions: pa.Array, pos_column: str):
    """A boolean Column: true where the row position in `pos_column` is not one of `positions`."""
    from pyspark.sql import functions as F

    words = bitmap_words(positions)
    if len(words) == 0:
        return F.lit(True)
    # One string literal, not an array of literals: building 10^5 Columns would cost seconds on the driver.
    bitmap = F.split(F.lit(",".join(map(str, words.tolist()))), ",").cast("array<bigint>")
    pos = F.col(pos_column)
    word = F.coalesce(F.get(bitmap, F.shiftright(pos, 6).cast("int")), F.lit(0).cast("bigint"))
    return F.bit_get(word, pos.bitwiseAND(63).cast("int")) == 0
