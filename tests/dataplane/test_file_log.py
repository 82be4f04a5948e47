"""The file-sink log scans hand Spark (dataplane/spark/file_log.py): Spark takes the files and sizes from
`_spark_metadata/0` and never lists or stats them. An internal Spark mechanism (MetadataLogFileIndex), pinned here on
local files so a Spark upgrade that changes it fails here and not only in the S3 lane. Classic sessions read the log
from a driver-local temporary folder; Spark Connect sessions (SPARK_DUCKLAKE_TEST_CONNECT=1) read a log kept next to the
files and named by its content (dataplane/spark/file_log.py), or get the paths when there are few files."""

from __future__ import annotations

import gc
import glob
import os
import shutil
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ducklake.dataplane.arrow import storage as paths
from spark_ducklake.dataplane.spark import file_log
from spark_ducklake.errors import StorageError


def _files(folder, count: int) -> list[str]:
    folder.mkdir(exist_ok=True)
    out = []
    for i in range(count):
        path = str(folder / f"f{i}.parquet")
        pq.write_table(pa.table({"id": pa.array([i * 10 + j for j in range(10)], pa.int64())}), path)
        out.append(path)
    return out


def _logs_near(folder) -> list[str]:
    return glob.glob(os.path.join(str(folder), file_log.SCAN_LOG_PREFIX + "*"))


def _temp_logs() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), file_log.SCAN_LOG_PREFIX + "*")))


def test_spark_reads_exactly_the_logged_files_with_their_logged_sizes(tmp_path, spark):
    data = tmp_path / "a dir%x"  # characters a URI must encode
    files = _files(data, 3)
    logged = files[:2]  # the third file sits in the same folder but is not in the log: it must not be read
    folder = str(tmp_path / "log")
    file_log.write_file_log(folder, logged, [os.path.getsize(p) for p in logged])
    df = spark.read.schema("id long").option("recursiveFileLookup", "true").parquet(folder)
    rows = df.select("id", "_metadata.file_path", "_metadata.file_size").collect()
    assert sorted(r["id"] for r in rows) == list(range(20))
    assert {r["file_path"] for r in rows} == {paths.spark_file_uri(p) for p in logged}
    assert {r["file_size"] for r in rows} == {os.path.getsize(p) for p in logged}


def test_planning_stats_no_file(tmp_path, spark):
    """A logged file that does not exist still plans (Spark never looked at it); listing the paths fails. Over
    Spark Connect the paths are listed either way."""
    real = _files(tmp_path / "d", 2)
    ghost = str(tmp_path / "d" / "never-written.parquet")
    sizes = [os.path.getsize(p) for p in real] + [1234]
    if paths.is_connect(spark):
        with pytest.raises(Exception, match="(?i)path.*not.*exist|PATH_NOT_FOUND"):
            file_log.read_parquet(spark, "id long", real + [ghost], sizes).inputFiles()
        return
    df = file_log.read_parquet(spark, "id long", real + [ghost], sizes)
    assert sorted(df.inputFiles()) == sorted(paths.spark_file_uri(p) for p in real + [ghost])
    with pytest.raises(Exception, match="(?i)path.*not.*exist|PATH_NOT_FOUND"):
        file_log.read_parquet(spark, "id long", real + [ghost]).inputFiles()  # no sizes: Spark lists them


def test_the_log_lives_as_long_as_spark_needs_it(tmp_path, spark, monkeypatch):
    """Classic: the log is read when the DataFrame is made, and removed then; the DataFrame keeps working. No log
    is ever left next to the data (Connect sessions get the paths)."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # only this test's logs: lanes run side by side
    files = _files(tmp_path / "d", 3)
    before = _temp_logs()
    df = file_log.read_parquet(spark, "id long", files, [os.path.getsize(p) for p in files])
    derived = df.where("id % 2 = 0").select("id")
    del df
    gc.collect()
    assert sorted(r["id"] for r in derived.collect()) == list(range(0, 30, 2))
    assert _logs_near(tmp_path / "d") == []
    assert _temp_logs() - before == set()
    assert derived.count() == 15


def test_unwritable_log_folder_falls_back_to_listing(tmp_path, spark, monkeypatch):
    files = _files(tmp_path / "d", 2)

    def refuse(*_args):
        raise PermissionError("read-only folder")

    monkeypatch.setattr(file_log, "write_file_log", refuse)
    if paths.is_connect(spark):  # no log over Connect: the paths are listed
        df = file_log.read_parquet(spark, "id long", files, [os.path.getsize(p) for p in files])
        assert df.count() == 20
    else:  # a driver-local temporary folder that cannot be written is a broken machine: the error surfaces
        with pytest.raises(PermissionError):
            file_log.read_parquet(spark, "id long", files, [os.path.getsize(p) for p in files])


@pytest.mark.lake(data_inlining_row_limit=0)
def test_lake_read_plans_from_the_catalog_without_touching_files(lake, spark, tmp_path):
    """lake.read hands Spark the catalog's file list: with a data file removed behind the catalog's back, the
    DataFrame is still made (the error comes only when the file is read)."""
    lake.create_table("t", "id BIGINT")
    for i in range(3):
        lake.write(spark.createDataFrame([(i,)], "id long"), "t")
    files = lake.plan_scan("t").files
    assert len(files) == 3
    os.remove(files[0].path)
    if paths.is_connect(spark):  # Connect sessions get the paths, which Spark lists
        with pytest.raises(StorageError, match="a file the lake needs is missing"):
            lake.read("t").inputFiles()
        return
    df = lake.read("t")
    assert sorted(df.inputFiles()) == sorted(paths.spark_file_uri(f.path) for f in files)


@pytest.mark.lake(data_inlining_row_limit=0)
def test_a_log_left_by_a_dead_connect_client_is_an_orphan(lake):
    """A scan-log folder next to the data (what Spark Connect scans leave there) is scratch:
    delete_orphaned_files reclaims it once older than the threshold, like a dead writer's staging folder."""
    lake.small_data_threshold = 1 << 40  # written in process: no Spark
    lake.create_table("t", "id BIGINT")
    lake.write(pa.table({"id": pa.array([1, 2], pa.int64())}), "t")
    files = lake.plan_scan("t").files
    folder = f"{files[0].path.rsplit('/', 1)[0]}/{file_log.SCAN_LOG_PREFIX}dead"
    file_log.write_file_log(folder, [f.path for f in files], [f.file_size_bytes for f in files])
    log = os.path.join(folder, "_spark_metadata", "0")
    assert lake.delete_orphaned_files(cleanup_all=True, dry_run=True) != []
    assert {row.path for row in lake.delete_orphaned_files(cleanup_all=True)} == {log}
    assert not os.path.exists(folder) and all(os.path.exists(f.path) for f in files)


def test_a_shared_log_is_named_by_its_content_and_written_once(tmp_path):
    files = _files(tmp_path / "d", 3)
    sizes = [os.path.getsize(p) for p in files]
    folder = file_log.shared_log_folder(files, sizes)
    assert folder is not None and folder.startswith(str(tmp_path / "d" / file_log.SCAN_LOG_PREFIX))
    log = os.path.join(folder, "_spark_metadata", "0")
    written = os.stat(log).st_mtime_ns
    assert file_log.shared_log_folder(list(files), list(sizes)) == folder  # the same files: the same log
    assert os.stat(log).st_mtime_ns == written
    other = file_log.shared_log_folder(files[:2], sizes[:2])
    assert other not in (None, folder)
    assert sorted(os.listdir(tmp_path / "d")) == sorted([os.path.basename(f) for f in files]
                                                        + [os.path.basename(folder), os.path.basename(other)])


def test_no_shared_log_at_a_root(tmp_path):
    assert file_log.shared_log_folder(["/a.parquet", "/b/c.parquet"], [1, 2]) is None
    assert file_log.shared_log_folder(["s3://bucket/a.parquet", "s3://bucket/b.parquet"], [1, 2]) is None


def test_spark_plans_many_files_from_a_log_on_classic_and_connect(tmp_path, spark):
    """Enough files for Connect sessions to get a shared log: a logged file that does not exist still plans (Spark
    never looked at it), and the rows are exactly the logged files'."""
    real = _files(tmp_path / "d", file_log.CONNECT_MIN_FILES)
    ghost = str(tmp_path / "d" / "never-written.parquet")
    sizes = [os.path.getsize(p) for p in real]
    df = file_log.read_parquet(spark, "id long", real + [ghost], sizes + [1234])
    assert sorted(df.inputFiles()) == sorted(paths.spark_file_uri(p) for p in real + [ghost])
    df = file_log.read_parquet(spark, "id long", real, sizes)
    assert df.count() == 10 * len(real)
    assert df.count() == 10 * len(real)  # analyzed again (as a Connect server does at every action)


def test_a_removed_shared_log_fails_instead_of_reading_nothing(tmp_path, spark):
    files = _files(tmp_path / "d", 2)
    folder = file_log.shared_log_folder(files, [os.path.getsize(p) for p in files])
    reader = spark.read.schema("id long").option("recursiveFileLookup", "true")
    assert reader.parquet(folder).count() == 20
    shutil.rmtree(os.path.join(folder, "_spark_metadata"))
    with pytest.raises(Exception, match="(?i)parquet|magic"):
        reader.parquet(folder).count()
