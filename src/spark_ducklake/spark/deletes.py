"""Row-level deletes on Spark: find the positions a condition matches, write merged positional delete files.

Delete files follow the reference (Iceberg positional deletes): one file per data file per snapshot, columns
`file_path` (field id 2147483646, the data file's absolute path) and `pos` (field id 2147483645), sorted, merged with
the data file's previous delete file. Few positions go to the catalog's inlined delete table instead.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ..catalog.model import DataFile, NewDeleteFile
from ..catalog.spec_tables import new_uuid
from ..scan_plan import ScanPlan
from .paths import filesystem, spark_path
from .scan import FILE, POS
from .write import delete_paths

FILE_PATH_FIELD_ID, POS_FIELD_ID = 2147483646, 2147483645


@dataclass
class DeletePlan:
    """What a DELETE changes, ready to commit."""

    deleted_rows: int = 0
    delete_files: list[NewDeleteFile] = field(default_factory=list)
    ended_files: list[int] = field(default_factory=list)  # data files whose every row is now deleted
    inlined_file_deletes: dict[int, list[int]] = field(default_factory=dict)  # file id -> positions
    inlined_row_ids: list[int] = field(default_factory=list)  # inlined rows to end

    @property
    def touched_files(self) -> set[int]:
        """Data files this delete changes (conflict detection)."""
        return {d.data_file_id for d in self.delete_files} | set(self.ended_files) | set(self.inlined_file_deletes)

    @property
    def empty(self) -> bool:
        """True when the condition matched nothing."""
        return self.deleted_rows == 0


def plan_delete(spark, plan: ScanPlan, condition, inline_limit: int) -> DeletePlan:
    """Find the rows `condition` matches (on executors) and stage what deleting them takes."""
    frame = plan.to_dataframe(spark, positions=True)
    matches = (frame if condition is None else frame.where(condition)).select(FILE, POS).cache()
    try:
        return stage_deletes(spark, plan, matches, inline_limit)
    finally:
        matches.unpersist()


def stage_deletes(spark, plan: ScanPlan, matches, inline_limit: int) -> DeletePlan:
    """Stage the deletion of `matches` (columns _dl_file, _dl_pos; cached by the caller)."""
    from pyspark.sql import functions as F

    few = matches.limit(inline_limit + 1).collect() if inline_limit > 0 else None
    if few is not None and len(few) <= inline_limit:  # one cheap job answers everything for small deletes
        counts = Counter(r[FILE] for r in few)
        positions = few
    else:
        counts = {r[FILE]: r["count"] for r in matches.groupBy(FILE).count().collect()}
        positions = None
    result = DeletePlan(deleted_rows=sum(counts.values()))
    if None in counts:  # inlined rows: catalog data, small by design
        inlined_rows = positions if positions is not None else matches.where(F.col(FILE).isNull()).collect()
        result.inlined_row_ids = [r[POS] for r in inlined_rows if r[FILE] is None]
    file_counts = {fid: n for fid, n in counts.items() if fid is not None}
    if not file_counts:
        return result
    files = {f.data_file_id: f for f in plan.files if f.data_file_id in file_counts}
    already = {fid: len(plan.inlined_deletes.get(fid, ())) + (f.delete_file.delete_count if f.delete_file else 0)
               for fid, f in files.items()}
    result.ended_files = [fid for fid, n in file_counts.items() if n + already[fid] >= files[fid].record_count]
    rest = {fid: n for fid, n in file_counts.items() if fid not in result.ended_files}
    if rest and sum(rest.values()) <= inline_limit:
        if positions is None:
            positions = matches.where(F.col(FILE).isin(list(rest))).collect()
        for r in positions:
            if r[FILE] in rest:
                result.inlined_file_deletes.setdefault(r[FILE], []).append(r[POS])
    elif rest:
        new = matches.where(F.col(FILE).isin(list(rest)))
        result.delete_files = write_delete_files(spark, new, [files[fid] for fid in rest], plan.table.path)
    return result


def write_delete_files(spark, positions, files: list[DataFile], table_path: str) -> list[NewDeleteFile]:
    """One merged, sorted delete file per data file (new positions plus its current delete file's)."""
    from pyspark.sql import functions as F

    parts = [positions.select(FILE, POS)]
    old = [f for f in files if f.delete_file is not None]
    if old:
        lookup = spark.createDataFrame([(spark_path(f.delete_file.path), f.data_file_id) for f in old],
                                       f"_dl_src string, {FILE} long")
        previous = (spark.read.schema("pos long").parquet(*[spark_path(f.delete_file.path) for f in old])
                    .select(F.col("_metadata.file_path").alias("_dl_src"), F.col("pos").alias(POS)))
        # `_metadata.file_path` is a URI: match on the file name, unique per delete file.
        previous = previous.withColumn("_dl_src", F.regexp_extract("_dl_src", r"([^/]+)$", 1))
        lookup = lookup.withColumn("_dl_src", F.regexp_extract("_dl_src", r"([^/]+)$", 1))
        parts.append(previous.join(F.broadcast(lookup), "_dl_src").select(FILE, POS))
    merged = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1]).distinct()
    paths = spark.createDataFrame([(f.data_file_id, f.path) for f in files], f"{FILE} long, _dl_data string")
    out = (
        merged.join(F.broadcast(paths), FILE)
        .select(F.col(FILE),
                F.col("_dl_data").alias("file_path", metadata={"parquet.field.id": FILE_PATH_FIELD_ID}),
                F.col(POS).cast("long").alias("pos", metadata={"parquet.field.id": POS_FIELD_ID}))
        .repartition(FILE)
        .sortWithinPartitions(FILE, "pos")
    )
    staging = f"{table_path}_staging-{uuid.uuid4().hex}/"
    fs, inner = filesystem(staging)
    moved: list[str] = []
    try:
        out.write.partitionBy(FILE).parquet(spark_path(staging))
        written = []
        for info in fs.get_file_info(pafs.FileSelector(inner, recursive=True)):
            if info.type == pafs.FileType.File and info.base_name.endswith(".parquet"):
                file_id = int(info.path.rsplit(f"{FILE}=", 1)[1].split("/", 1)[0])
                target = f"{table_path}ducklake-{new_uuid()}-delete.parquet"
                fs.move(info.path, filesystem(target)[1])
                moved.append(target)
                written.append((file_id, target))
        result = []
        for file_id, target in written:
            tfs, tinner = filesystem(target)
            meta = pq.read_metadata(tinner, filesystem=tfs)
            result.append(NewDeleteFile(data_file_id=file_id, path=target, delete_count=meta.num_rows,
                                        file_size_bytes=tfs.get_file_info(tinner).size,
                                        footer_size=meta.serialized_size))
        return result
    except BaseException:
        delete_paths(moved)
        raise
    finally:
        delete_paths([staging], directories=True)
