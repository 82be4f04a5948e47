"""Building a table's DataFrame at a snapshot on Spark's native Parquet reader.

Data files are read by Parquet field id (column pruning and filter pushdown stay Spark's). Files without deletes are
a plain scan; deleted positions (read on the driver when few) drop rows by `_metadata.row_index`: as a bitmap filter
over one scan of the files with deletes (`position_filter.py`: small bitmaps ride in the plan keyed by file path,
big ones are broadcast one row per file keyed by file size), or broadcast and anti-joined on
(file, position), never shuffling a row (`without_deleted`). Files that predate a column yield its initial default;
inlined rows from the catalog are unioned in. When a column name ever changed meaning, columns are read under
internal names so Spark's by-name row-group filters cannot pick the wrong column. Columns Spark cannot decode (uuid,
time, timestamp_ns, interval) make the scan read its files with pyarrow on the executors instead (`arrow_files.py`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import reduce

import pyarrow as pa
import pyarrow.compute as pc

from ...catalog.reads.file_list import FileList, field_values, full_paths, nulls_in, plain, subset
from ...spec import types
from ...spec.internal_columns import INLINED_ROW_ID, ROW_ID_COLUMN, SNAPSHOT_ID_COLUMN
from ...spec.model import Column, DataFile, TableInfo
from ...spec.names import spark_name
from ..arrow.delete_files import positions_as_of
from ..arrow.native_types import is_native
from ..arrow.scan_columns import BEGIN, DELETED, FILE, PATH, POS, ROW_START, TABLE_ONLY, ScanColumns
from ..arrow.storage import is_connect, spark_file_uri
from . import position_filter
from . import types as spark_types
from .arrow_files import read_with_arrow
from .encrypted.read import encrypted_delete_positions, read_encrypted_files
from .file_log import read_parquet
from .mapped_files import read_mapped
from .vector_positions import deletion_vector_positions
from .virtual_columns import FILE_INDEX, FILENAME, INLINED_TABLE, file_values, inlined_values, virtual_fields

SIZE = "_dl_size"  # a data file's size as Spark has it (`_metadata.file_size`)
BROADCAST_POSITIONS = 1_000_000  # about 16 MB of (file, position) pairs
LOCAL_DELETE_FILES = 2_000  # delete files a scan reads on the driver (each a request on object storage)
BITMAP_FILES = 16  # files with deletes filtered by a bitmap (each row looks its file up among this many paths)
BITMAP_FILTER = True  # files with deletes drop deleted rows by a bitmap filter (position_filter.py), not a join


def scan_table(spark, table: TableInfo, files: list[DataFile], *, snapshot_id: int,
               inlined: pa.Table | None = None, inlined_deletes: dict[int, list[int]] | None = None,
               names_stable: bool = True, extra: ScanColumns = TABLE_ONLY):
    """The table's rows visible at `snapshot_id` as a DataFrame, plus the columns `extra` asks for (`rowid`,
    positions, virtual columns; its `snapshots` and `lineage` are the scan's own business and ignored).

    Positions are `_dl_file` (data file id; NULL for inlined rows) and `_dl_pos` (row position in the file; the row
    id for inlined rows): what row-level changes need to address rows. Virtual columns are DuckDB's, by name
    (virtual_columns.py); the inlined rows must then carry their source columns.
    """
    from pyspark.sql import functions as F

    extra = replace(extra, virtual=tuple(v for v in extra.virtual if not (extra.row_ids and v == "rowid")))
    row_ids, positions, virtual = extra.row_ids, extra.positions, extra.virtual
    inlined_deletes = {k: v for k, v in (inlined_deletes or {}).items() if v}
    internal = internal_names(table, names_stable)
    dirty_ids = _ids_with_deletes(files, inlined_deletes)
    partial = _any_partial(files, snapshot_id)
    lineage = row_ids or partial or "rowid" in virtual  # rows rewritten by updates/compaction carry their own row id
    snapshots = partial or "snapshot_id" in virtual
    names = [c.name for c in table.columns]
    bare = not (row_ids or positions or virtual) and all(internal[c.column_id] == c.name for c in table.columns)
    native = all(is_native(c) for c in table.columns)
    indexes = None  # DuckDB numbers the scanned files in data file id order
    if "file_index" in virtual:
        indexes = {fid: i for i, fid in enumerate(sorted(field_values(files, "data_file_id")))}

    def finish(data, with_pos: bool):
        if with_pos:
            if partial:
                data = data.where(F.col(SNAPSHOT_ID_COLUMN).isNull() | (F.col(SNAPSHOT_ID_COLUMN) <= snapshot_id))
            rowid = F.col(ROW_START) + F.col(POS)
            if lineage or not native:
                rowid = F.coalesce(F.col(ROW_ID_COLUMN), rowid)
            data = data.withColumn("rowid", rowid)
            values = file_values(virtual) if virtual else {}
            data = data.withColumns(values) if values else data  # Spark Connect refuses an empty withColumns
        elif bare and data.columns == names:  # already the table's columns: a select would cost a call per column
            return data
        result_cols = [F.col(spark_name(internal[c.column_id])).alias(c.name) for c in table.columns]
        if row_ids:
            result_cols.append(F.col("rowid"))
        if positions:
            result_cols += [F.col(FILE), F.col(POS)]
        result_cols += [F.col(v) for v in virtual]
        return data.select(*result_cols)

    # Files without deletes are a plain scan: they pay for no join (nor for positions, unless asked).
    plain_pos = bool(row_ids or partial or positions or virtual)
    read = ScanColumns(positions=plain_pos, snapshots=snapshots, lineage=lineage)  # what the files' reads return
    frames = []
    # Picked by position from the columns: a FileList of 100k files builds no DataFile for a plain scan.
    file_ids = field_values(files, "data_file_id") if dirty_ids else []
    clean = read_files(spark, table, subset(files, [i for i, fid in enumerate(file_ids) if fid not in dirty_ids])
                       if dirty_ids else files, internal, read, indexes=indexes)
    if clean is not None:
        frames.append(finish(clean, plain_pos))
    dirty = subset(files, [i for i, fid in enumerate(file_ids) if fid in dirty_ids]) if dirty_ids else []
    frames += [finish(frame, plain_pos) for frame in without_deleted(spark, table, dirty, internal, inlined_deletes,
                                                                     snapshot_id, read, indexes=indexes,
                                                                     file_ids=plain_pos)]
    data = reduce(lambda a, b: a.unionByName(b), frames) if frames else None
    if inlined is not None and inlined.num_rows:
        small = _inlined_frame(spark, inlined, table, extra, len(files))
        data = small if data is None else data.unionByName(small)
    if data is None:
        data = spark.createDataFrame([], _result_schema(table, extra))
    return data


def _ids_with_deletes(files: Sequence[DataFile], inlined_deletes: dict[int, list[int]]) -> set[int]:
    """Ids of the files with a delete file or inlined deletes (a FileList answers from its columns)."""
    if isinstance(files, FileList):
        candidates = set(files.deletes) | set(inlined_deletes)
        if not candidates:
            return set()
        ids = files.ids()
        return set(ids.filter(pc.is_in(ids, pa.array(sorted(candidates), pa.int64()))).to_pylist())
    return {f.data_file_id for f in files if f.delete_file} | (set(inlined_deletes) & {f.data_file_id
                                                                                       for f in files})


def _any_partial(files: Sequence[DataFile], snapshot_id: int) -> bool:
    """Whether a file holds rows of snapshots after `snapshot_id` (a compacted file's partial_max)."""
    if isinstance(files, FileList):
        top = pc.max(files.column("partial_max")).as_py()
        return top is not None and top > snapshot_id
    return any(f.partial_max is not None and f.partial_max > snapshot_id for f in files)


def without_deleted(spark, table: TableInfo, files: Sequence[DataFile], internal: dict[int, str],
                    inlined_deletes: dict[int, list[int]], snapshot_id: int, extra: ScanColumns, *,
                    indexes: dict[int, int] | None = None, file_ids: bool = True) -> list:
    """Frames of the rows of `files` (each with deletes) not deleted at the snapshot, with position columns
    whatever `extra` says (they address the deletes) and its `snapshots` and `lineage` columns
    (`file_ids=False`: only `_dl_path` and `_dl_pos`, when the caller needs no file ids: no join on the path).

    Few positions (the catalog's counts) are read on the driver, so no Spark job builds them and no row is
    shuffled. Few files share one scan filtered by bitmaps of their positions carried in the plan, looked up by
    the row's file path: no join, no broadcast job per query. Many files share one scan and a broadcast
    (file id, position) join; more positions than a broadcast holds are read by Spark and joined.
    """
    from pyspark.sql import functions as F

    if not files:
        return []
    extra = replace(extra, positions=True)
    known = (sum(f.delete_file.delete_count or 0 for f in files if f.delete_file)
             + sum(len(inlined_deletes.get(f.data_file_id, ())) for f in files))
    vectors = any(f.delete_file is not None and (f.delete_file.format == "puffin" or f.delete_file.encrypted)
                  for f in files)  # deletion vectors and encrypted delete files: positions read on the executors
    if known > BROADCAST_POSITIONS or len(files) > LOCAL_DELETE_FILES or vectors:  # Spark reads the positions
        data = read_files(spark, table, files, internal, extra, indexes=indexes)
        deleted = deleted_positions(spark, files, inlined_deletes, snapshot_id)
        return [data.join(broadcast_if_small(deleted, known), [FILE, POS], "left_anti")]
    gone = _local_positions(files, inlined_deletes, snapshot_id)
    if (BITMAP_FILTER and len(files) <= BITMAP_FILES
            and (words := position_filter.word_count(list(gone.values()))) <= position_filter.MAX_WORDS):
        one = len(files) == 1  # one file's scan: its bitmap goes to every row, no key read
        by_size = {0: files[0]} if one else _sizes_as_spark_sees(spark, table, files)
        broadcast = by_size is not None and words > position_filter.BROADCAST_WORDS
        data = read_files(spark, table, files, internal, extra, indexes=indexes, file_ids=file_ids,
                          file_sizes=broadcast and not one)
        if broadcast and by_size is not None:  # broadcast only with the sizes
            bitmaps = {size: gone[f.data_file_id] for size, f in by_size.items() if len(gone[f.data_file_id])}
            return [position_filter.drop_deleted(spark, data, bitmaps, None if one else SIZE, POS)]
        by_path = {spark_file_uri(f.path): gone[f.data_file_id] for f in files}  # in the plan: no join, no job
        return [data.where(position_filter.not_deleted_in(by_path, PATH, POS))]
    data = read_files(spark, table, files, internal, extra, indexes=indexes)
    if not any(len(p) for p in gone.values()):  # partial delete files holding only later deletions
        return [data]
    table_of = pa.table({FILE: pa.concat_arrays([pa.array([fid] * len(p), pa.int64()) for fid, p in gone.items()]),
                         POS: pa.concat_arrays(list(gone.values()))})
    return [data.join(F.broadcast(spark.createDataFrame(table_of)), [FILE, POS], "left_anti")]


def _local_positions(files: Sequence[DataFile], inlined_deletes: dict[int, list[int]],
                     snapshot_id: int) -> dict[int, pa.Array]:
    """Data file id -> its positions deleted at the snapshot (delete file and inlined deletes), read on the driver
    (delete files in parallel: on object storage each read is a request)."""
    from concurrent.futures import ThreadPoolExecutor

    with_files = [f for f in files if f.delete_file is not None]
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(with_files)))) as pool:
        read = dict(zip([f.data_file_id for f in with_files],
                        pool.map(lambda f: positions_as_of(f.delete_file, snapshot_id), with_files), strict=True))
    out = {}
    for f in files:
        parts = [read[f.data_file_id]] if f.data_file_id in read else []
        if inlined_deletes.get(f.data_file_id):
            parts.append(pa.array(inlined_deletes[f.data_file_id], pa.int64()))
        out[f.data_file_id] = pc.unique(pa.concat_arrays(parts)) if parts else pa.array([], pa.int64())
    return out


def _sizes_as_spark_sees(spark, table: TableInfo, files: Sequence[DataFile]) -> dict[int, DataFile] | None:
    """Files by the size Spark shows for them in `_metadata.file_size`, or None when that cannot key them: sizes
    not distinct, or not surely the catalog's (Spark Connect may be handed paths, whose sizes Spark reads from the
    store), or files read by another reader than Spark's native one (name mappings, encryption, pyarrow types)."""
    sizes = [f.file_size_bytes for f in files]
    if (is_connect(spark) or None in sizes or len(set(sizes)) != len(sizes)
            or not all(is_native(c) for c in table.columns)
            or any(f.name_map is not None or f.encryption_key for f in files)):
        return None
    return dict(zip(sizes, files, strict=True))


def broadcast_if_small(positions, count: int):
    """Deleted positions (`count` of them, as the catalog says) marked for a broadcast join when they are few:
    planning cannot size them, and a sort-merge join would shuffle every row of the files they delete from."""
    from pyspark.sql import functions as F

    return F.broadcast(positions) if count <= BROADCAST_POSITIONS else positions


def internal_names(table: TableInfo, names_stable: bool) -> dict[int, str]:
    """Column id -> the name a scan reads it under (internal names when a name ever changed meaning)."""
    return {c.column_id: c.name if names_stable else f"_dl_c{c.column_id}" for c in table.columns}


def read_files(spark, table: TableInfo, files: Sequence[DataFile], internal: dict[int, str], extra: ScanColumns, *,
               indexes: dict[int, int] | None = None, file_ids: bool = True, file_sizes: bool = False):
    """Every row of the data files under the table's columns (named by `internal`), deletes not applied, plus the
    columns `extra` asks for (its `row_ids` and `virtual` are the scan's, ignored here).

    Columns a file predates read as their initial default. `positions` adds `_dl_file` (data file id), `_dl_pos`
    (row position), `_dl_row_start` and `_dl_begin` (the file's row_id_start and begin_snapshot); `snapshots`
    and `lineage` add the files' `_ducklake_internal_snapshot_id` / `_ducklake_internal_row_id` (NULL where a
    file lacks them). None when there are no files. Positions also bring the file's catalog path and its
    `indexes` entry (data file id -> place in the scan; -1 without) for the virtual columns; `file_ids=False`
    keeps just `_dl_path` and `_dl_pos` (no join on the path). `file_sizes` adds `_dl_size` (the file's size as
    Spark has it; only for files Spark's native reader reads).
    """
    native = all(is_native(c) for c in table.columns)
    frames = []
    for (missing, name_map), group in _group_by_missing(files, table.columns).items():
        present = [c for c in table.columns if c.column_id not in missing]
        secret = [f for f in group if f.encryption_key] if nulls_in(group, "encryption_key") < len(group) else []
        if secret:  # ENCRYPTED lakes: decrypted on the executors (dataplane/spark/encrypted/)
            group = [f for f in group if not f.encryption_key]
            frames.append(_with_defaults(read_encrypted_files(spark, secret, present, internal, extra,
                                                              name_map=name_map), table.columns, missing, internal))
            if not group:
                continue
        if file_sizes and (name_map is not None or not native):
            raise ValueError("file sizes come only from Spark's native reader")
        if name_map is not None and native:  # files without field ids: by the names their mapping gives
            frame = read_mapped(spark, group, present, internal, name_map, extra)
        elif native:
            frame = _native(spark, group, present, internal, extra, file_sizes)
        else:
            frame = read_with_arrow(spark, group, present, internal, extra, name_map=name_map)
        frames.append(_with_defaults(frame, table.columns, missing, internal))
    if not frames:
        return None
    data = reduce(lambda a, b: a.unionByName(b), frames)
    return _attach_file_ids(spark, data, files, indexes or {}) if extra.positions and file_ids else data


def _with_defaults(frame, columns: list[Column], missing, internal: dict[int, str]):
    """`frame` plus the columns its files predate, as their initial defaults."""
    for col in columns:
        if col.column_id in missing:
            frame = frame.withColumn(internal[col.column_id], _default(col))
    return frame


def _result_schema(table: TableInfo, extra: ScanColumns):
    from pyspark.sql import types as T

    fields = [T.StructField(c.name, spark_types.to_spark_type(c), True) for c in table.columns]
    if extra.row_ids:
        fields.append(T.StructField("rowid", T.LongType(), True))
    if extra.positions:
        fields += [T.StructField(FILE, T.LongType(), True), T.StructField(POS, T.LongType(), True)]
    return T.StructType(fields + virtual_fields(extra.virtual))


def _group_by_missing(files: Sequence[DataFile], columns: list[Column]) -> Mapping[tuple, Sequence[DataFile]]:
    """Files grouped by which top-level columns they lack (those read as the column's initial default) and by
    the name mapping they are read with (None: by field id)."""
    if plain(files):
        return _group_columns(files, columns)
    groups: dict[tuple, list[DataFile]] = defaultdict(list)
    for f in files:
        if f.absent_columns is not None:
            missing = frozenset(c.column_id for c in columns if c.column_id in f.absent_columns)
        else:
            missing = frozenset(
                c.column_id for c in columns
                if c.added_snapshot is not None and f.begin_snapshot < c.added_snapshot and f.partial_max is None
            )
        groups[(missing, f.name_map)].append(f)
    return groups


def _group_columns(files: FileList, columns: list[Column]) -> Mapping[tuple, Sequence[DataFile]]:
    """_group_by_missing of a FileList whose objects carry nothing (no absent_columns, no name map): decided by
    the snapshots alone, from the columns."""
    begin, whole = files.column("begin_snapshot"), pc.is_null(files.column("partial_max"))
    masks = [(c.column_id, pc.and_(pc.less(begin, c.added_snapshot), whole)) for c in columns
             if c.added_snapshot is not None]
    masks = [(column_id, mask) for column_id, mask in masks if pc.any(mask).as_py()]
    if not masks:
        return {(frozenset(), None): files}
    groups: dict[frozenset, list[int]] = defaultdict(list)
    for i, flags in enumerate(zip(*[mask.to_pylist() for _, mask in masks], strict=True)):
        groups[frozenset(column_id for (column_id, _), flag in zip(masks, flags, strict=True) if flag)].append(i)
    return {(missing, None): subset(files, indices) for missing, indices in groups.items()}


def _default(col: Column):
    from pyspark.sql import functions as F

    value = None if col.is_nested else types.parse_literal(col.type, col.initial_default)
    return F.lit(value).cast(spark_types.to_spark_type(col))


def _native(spark, files: Sequence[DataFile], present: list[Column], internal: dict[int, str], extra: ScanColumns,
            sizes: bool = False):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    fields = [T.StructField(internal[c.column_id], spark_types.native_read_type(c), True,
                            {types.FIELD_ID_KEY: c.column_id}) for c in present]
    if extra.snapshots:
        fields.append(T.StructField(SNAPSHOT_ID_COLUMN, T.LongType(), True))
    if extra.lineage:
        fields.append(T.StructField(ROW_ID_COLUMN, T.LongType(), True))
    frame = read_parquet(spark, T.StructType(fields), full_paths(files), field_values(files, "file_size_bytes"))
    read_types = [spark_types.native_read_type(c) for c in present]
    if not (extra.snapshots or extra.lineage or extra.positions or sizes) and all(
            _same(t, spark_types.to_spark_type(c)) for t, c in zip(read_types, present, strict=True)):
        return frame  # read as the columns are: no select (a Spark call per column)
    cols = []
    for c in present:
        name, wanted = internal[c.column_id], spark_types.to_spark_type(c)
        read_type = spark_types.native_read_type(c)
        ref = F.col(spark_name(name))
        cols.append(ref if _same(read_type, wanted) else ref.cast(wanted).alias(name))
    if extra.snapshots:
        cols.append(F.col(SNAPSHOT_ID_COLUMN))
    if extra.lineage:
        cols.append(F.col(ROW_ID_COLUMN))
    if extra.positions:
        cols += [F.col("_metadata.file_path").alias(PATH), F.col("_metadata.row_index").alias(POS)]
    if sizes:
        cols.append(F.col("_metadata.file_size").alias(SIZE))
    return frame.select(*cols)


def _same(a, b) -> bool:
    return a.simpleString() == b.simpleString()


def _attach_file_ids(spark, data, files: Sequence[DataFile], indexes: dict[int, int]):
    from pyspark.sql import functions as F

    if len(files) == 1:  # one file (a scan of its own, to apply its deletes): constants, no join on its path
        f = files[0]
        return data.withColumns({FILE: F.lit(f.data_file_id).cast("long"),
                                 ROW_START: F.lit(f.row_id_start or 0).cast("long"),
                                 BEGIN: F.lit(f.begin_snapshot).cast("long"),
                                 FILENAME: F.lit(f.path).cast("string"),
                                 FILE_INDEX: F.lit(indexes.get(f.data_file_id, -1)).cast("long")})
    lookup = spark.createDataFrame(pa.table({  # Arrow: far cheaper than Python rows for thousands of files
        PATH: pa.array([spark_file_uri(f.path) for f in files], pa.string()),
        FILE: pa.array([f.data_file_id for f in files], pa.int64()),
        ROW_START: pa.array([f.row_id_start or 0 for f in files], pa.int64()),
        BEGIN: pa.array([f.begin_snapshot for f in files], pa.int64()),
        FILENAME: pa.array([f.path for f in files], pa.string()),
        FILE_INDEX: pa.array([indexes.get(f.data_file_id, -1) for f in files], pa.int64())}))
    return data.join(F.broadcast(lookup), PATH)


def deleted_positions(spark, files: Sequence[DataFile], inlined_deletes: dict[int, list[int]], snapshot_id: int):
    """(file id, position) of every row deleted as of the snapshot, from delete files and inlined deletes."""
    from pyspark.sql import functions as F

    parts = []
    with_files = [(f.delete_file.path, f.data_file_id, f.delete_file.begin_snapshot) for f in files
                  if f.delete_file is not None and f.delete_file.format != "puffin"
                  and not f.delete_file.encrypted]
    secret = [(f.delete_file.path, f.data_file_id, f.delete_file.begin_snapshot, f.delete_file.encryption_key)
              for f in files if f.delete_file is not None and f.delete_file.encrypted
              and f.delete_file.encryption_key is not None]  # encrypted: it has a key
    if secret:
        parts.append(encrypted_delete_positions(spark, secret).where(F.col(DELETED) <= snapshot_id).select(FILE, POS))
    vectors = [(f.delete_file.path, f.data_file_id, f.delete_file.begin_snapshot, f.delete_file.partial_max)
               for f in files if f.delete_file is not None and f.delete_file.format == "puffin"]
    if vectors:
        raw = deletion_vector_positions(spark, vectors, (FILE, POS, DELETED))
        parts.append(raw.where(F.col(DELETED) <= snapshot_id).select(FILE, POS))
    if with_files:
        raw = delete_file_positions(spark, with_files)
        parts.append(raw.where(F.col(DELETED) <= snapshot_id).select(FILE, POS))
    ids = {f.data_file_id for f in files}
    small = [(fid, pos) for fid, positions in inlined_deletes.items() if fid in ids for pos in positions]
    if small:
        parts.append(spark.createDataFrame(small, f"{FILE} long, {POS} long"))
    if not parts:
        return spark.createDataFrame([], f"{FILE} long, {POS} long")
    return reduce(lambda a, b: a.unionByName(b), parts)


def delete_file_positions(spark, delete_files: list[tuple[str, int, int]]):
    """(`_dl_file`, `_dl_pos`, `_dl_deleted`) of every position in the given positional delete files.

    `delete_files` holds (delete file path, data file id, begin snapshot). `_dl_deleted` is the snapshot that
    deleted the row: the `_ducklake_internal_snapshot_id` a partial (merged) delete file stores per position,
    else the delete file's begin snapshot.
    """
    from pyspark.sql import functions as F

    lookup = spark.createDataFrame([(spark_file_uri(path), fid, begin) for path, fid, begin in delete_files],
                                   f"_dl_del_path string, {FILE} long, _dl_del_begin long")
    raw = (read_parquet(spark, f"pos long, {SNAPSHOT_ID_COLUMN} long", [path for path, _fid, _begin in delete_files])
           .select(F.col("_metadata.file_path").alias("_dl_del_path"), F.col("pos").alias(POS),
                   F.col(SNAPSHOT_ID_COLUMN)))
    return raw.join(F.broadcast(lookup), "_dl_del_path").select(
        FILE, POS, F.coalesce(F.col(SNAPSHOT_ID_COLUMN), F.col("_dl_del_begin")).alias(DELETED))


def _inlined_frame(spark, inlined: pa.Table, table: TableInfo, extra: ScanColumns, file_count: int = 0):
    from pyspark.sql import functions as F

    virtual = extra.virtual

    if virtual and INLINED_TABLE not in inlined.column_names:
        raise ValueError("virtual columns of inlined rows need a plan read with inlined_sources=True")

    frame = spark.createDataFrame(spark_safe(inlined))
    cols = [F.col(spark_name(c.name)).cast(spark_types.to_spark_type(c)).alias(c.name) for c in table.columns]
    if extra.row_ids:
        cols.append(F.col(INLINED_ROW_ID).alias("rowid"))
    if extra.positions:
        cols += [F.lit(None).cast("long").alias(FILE), F.col(INLINED_ROW_ID).alias(POS)]
    if virtual:
        names = list(dict.fromkeys(inlined.column(INLINED_TABLE).to_pylist()))
        cols += inlined_values(virtual, sorted(names, key=_inlined_version), file_count)
    return frame.select(*cols)


def _inlined_version(name: str) -> int:
    """The schema version an inlined table's name ends with (`ducklake_inlined_data_<table>_<version>`)."""
    return int(name.rsplit("_", 1)[1])


def spark_safe(data: pa.Table) -> pa.Table:
    """Arrow types Spark's createDataFrame cannot take (unsigned ints) widened first."""
    fields = []
    for field in data.schema:
        t = field.type
        if pa.types.is_unsigned_integer(t):
            t = {8: pa.int16(), 16: pa.int32(), 32: pa.int64()}.get(t.bit_width, pa.decimal128(20, 0))
        fields.append(pa.field(field.name, t))
    return data.cast(pa.schema(fields))
