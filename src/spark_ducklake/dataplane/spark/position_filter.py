"""Data files' deleted positions applied as a Spark filter on bitmap literals: no join, no Spark job.

An anti-join with the positions costs every query a broadcast exchange (collecting, hashing and shipping the
positions again) and a join per row. A bitmap of each file's deleted positions (one bit per row
up to the last deleted one, in 64-bit words) travels in the plan instead, as one string literal that the optimizer
folds once into an array<bigint>; each row then costs an array read and a bit test. Several files share one scan
and one map literal (file path -> bitmap), looked up by the row's file path: a union of one scan per file cost
more planning and more tasks than the filter itself (bench/merge_on_read.py). A scan of one file reads no path:
Spark builds `_metadata` into a struct per row, so the path would be copied into every row.

Profiled at SF 1 (Q6, JVM CPU per query; docs/benchmarks.md): the per-row test is cheap (a 10-position bitmap cost
about what reading `_metadata.row_index` alone did, and evaluating it after the query's own predicates saved
nothing measurable); the cost is the literal's size, paid at planning (folding the string into ~94k words took
~0.1 s of optimizer time per query, plus analysis and pruning over the big literal) and reading the path. So big
bitmaps (`BROADCAST_WORDS`) travel as a broadcast of one row per file instead (`drop_deleted`), joined on the
file's size (`_metadata.file_size`: a number, not a path copied into every row) or, for a scan of one file, to
every row: 1.27x there by hand, against 2.5x for the literal.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Positions below 8.4M (TPC-H SF1's whole lineitem is 6M rows): the plan carries each word as ~20 bytes of text,
# folded by every query's optimizer, so bigger bitmaps (files deleted from past that) go to the join instead.
MAX_WORDS = 1 << 17
# Bitmaps of more words than this together (deleted positions past ~1M rows) are broadcast, not literals: folding
# the literal then costs the optimizer more (~1 us per word, every query) than a broadcast of a few rows.
BROADCAST_WORDS = 1 << 14
BITS = "_dl_bits"


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


def fits_all(positions: list[pa.Array]) -> bool:
    """Whether the bitmaps of these files' positions, together, are small enough to ride in a query plan."""
    return word_count(positions) <= MAX_WORDS


def not_deleted(positions: pa.Array, pos_column: str):
    """A boolean Column: true where the row position in `pos_column` is not one of `positions`."""
    from pyspark.sql import functions as F

    words = bitmap_words(positions)
    if len(words) == 0:
        return F.lit(True)
    return _bit_clear(_words_literal(words), F.col(pos_column))


def not_deleted_in(positions: dict[str, pa.Array], path_column: str, pos_column: str):
    """A boolean Column: true where the row at (`path_column`, `pos_column`) is not deleted; `positions` maps each
    file path (as the scan shows it) to that file's deleted positions. Rows of files not in the map are kept; a map
    of one path is taken as the scan's only file, whose path is then not read."""
    from pyspark.sql import functions as F

    words = {path: bitmap_words(p) for path, p in positions.items()}
    words = {path: w for path, w in words.items() if len(w)}
    if not words:
        return F.lit(True)
    if len(positions) == 1:  # the scan's only file: no path read at all (Spark builds it into a struct per row)
        return _bit_clear(_words_literal(next(iter(words.values()))), F.col(pos_column))
    if len(words) == 1:  # no lookup: one comparison of the (per-file constant) path
        ((path, only),) = words.items()
        return (F.col(path_column) != F.lit(path)) | _bit_clear(_words_literal(only), F.col(pos_column))
    bitmaps = F.create_map(*[c for path, w in words.items() for c in (F.lit(path), _words_literal(w))])
    return _bit_clear(F.try_element_at(bitmaps, F.col(path_column)), F.col(pos_column))


def word_count(positions: list[pa.Array]) -> int:
    """Words of the bitmaps of these files' positions, together."""
    return sum(0 if len(p) == 0 else (int(pc.max(p).as_py()) >> 6) + 1 for p in positions)


def drop_deleted(spark, data, positions: dict[int, pa.Array], size_column: str | None, pos_column: str):
    """`data` without its deleted rows, the bitmaps broadcast as one row per file: `positions` maps each file's
    size (as `size_column` shows it; sizes distinct) to its deleted positions. `size_column=None`: `data` is one
    file's rows and `positions` holds only that file."""
    from pyspark.sql import functions as F

    sizes = list(positions)
    bitmaps = spark.createDataFrame(pa.table({
        "_dl_bits_size": pa.array(sizes, pa.int64()),
        BITS: pa.array([bitmap_words(positions[size]) for size in sizes], pa.list_(pa.int64()))}))
    if size_column is None:
        joined = data.crossJoin(F.broadcast(bitmaps.drop("_dl_bits_size")))
    else:
        joined = data.join(F.broadcast(bitmaps), F.col(size_column) == F.col("_dl_bits_size"), "left")
    return (joined.where(_bit_clear(F.col(BITS), F.col(pos_column)))
            .drop(BITS, "_dl_bits_size", *([size_column] if size_column else [])))


def _words_literal(words: np.ndarray):
    """The words as one array<bigint> Column the optimizer folds into a literal."""
    from pyspark.sql import functions as F

    # One string literal, not an array of literals: building 10^5 Columns would cost seconds on the driver.
    return F.split(F.lit(",".join(map(str, words.tolist()))), ",").cast("array<bigint>")


def _bit_clear(bitmap, pos):
    """True where bit `pos` of the bitmap Column is 0 (positions past its end, or a NULL bitmap, are clear)."""
    from pyspark.sql import functions as F

    word = F.coalesce(F.get(bitmap, F.shiftright(pos, 6).cast("int")), F.lit(0).cast("bigint"))
    return F.bit_get(word, pos.bitwiseAND(63).cast("int")) == 0
