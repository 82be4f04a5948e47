"""The lake catalog service: what Spark's JVM catalog plugin (jvm/DuckLakeCatalog.java) asks our Python code.

Spark takes a catalog only as a JVM class (`spark.sql.catalog.<name>`), and the DuckLake logic lives here, in
Python, once. The plugin starts this module as a child process (`python -m spark_ducklake.catalog_service`), so it
works where no Python driver runs (the Thrift server, a Spark Connect server): the plugin writes one JSON line to
the child's standard input (catalog url, data path, attach options: secrets never reach a command line), and the
service answers with one JSON line on standard output (`{"port": ..., "token": ...}`), then serves HTTP/JSON on
127.0.0.1 at that port; every request must carry the token. The service ends when its standard input closes (the
JVM exited or closed the pipe), so it never outlives its Spark process.

Requests are `POST /` with a JSON object naming an `op`:
- `namespaces`: the lake's schemas.
- `tables` (`namespace`): the schema's table names.
- `table` (`namespace`, `table`, optional `version` or `timestamp_us`): the table's Spark schema (JSON, with
  Parquet field ids) and the snapshot it resolves to.
- `scan` (`namespace`, `table`, `snapshot`, `filters`: the conjuncts Spark pushed, pruning files by the catalog's
  statistics): a file-sink log (`_spark_metadata/0`, as file_log.py writes for
  Python scans) of the data files to read, in a folder the caller reads with Spark's MetadataLogFileIndex and then
  removes, and `names_stable` (false: push no filter into the reader, which matches file columns by name). The
  snapshot's inlined rows, and the data files with inlined deletes (with those deletes applied), are materialized
  with pyarrow as one more Parquet file of the scan, written under the table's field ids in the service's own
  scratch folder (never the lake's data path). `deletes` maps each other file with a delete file to the
  positions deleted at the snapshot, which the plugin's reader skips. A table whose files Spark's reader cannot
  read alone but pyarrow can (types Spark cannot decode, columns added with a default older files lack) is read
  whole that way, up to the small-data threshold, as one file in Spark's types; other such scans (files without
  field ids, ...) are refused, naming the cause.
- DDL, one snapshot each: `create_namespace`, `drop_namespace` (`cascade`), `create_table` (`schema`: Spark's
  StructType JSON, `partitioning`: Spark's transforms), `drop_table`, `rename_table` (`new_name`), `alter_table`
  (`changes`).
- `begin_write` (`namespace`, `table`, optional `create`, optional `row_level`: delete | update | merge, the
  statement that writes): where and how the JVM writes a statement's Parquet files (staging folder, Spark schema
  with field ids, Parquet options); `commit_write` (`staging`, `files`, `mode` append | truncate | overwrite
  with `filters` | dynamic, optional `create` for CTAS / RTAS): those files as one snapshot (a partitioned
  table's rows written again as its partitioned files).
- `commit_row_level` (`namespace`, `table`, `snapshot` the statement's scan read, `staging`, `deletes`: Parquet
  files of (`file_path`, `pos`) rows to delete, `updates`: files of new row versions with the old row's
  `_dl_file_path` and `_dl_pos`, `files`: inserted rows): DELETE / UPDATE / MERGE as one snapshot, committed
  after that snapshot with the Python API's conflict rules (updated rows keep their row ids).
- `procedures`: the names of the procedures `CALL <catalog>.system.<name>(...)` runs (PROCEDURES: the reference's
  maintenance functions, and snapshots / table_info / list_files / options / settings); `procedure` (`name`): its
  parameters in positional order (name, the Spark type declared when the argument is not given, required); `call`
  (`name`, `args`: `{parameter: {"type": Spark type name, "value": JSON}}` for the arguments given): one call of
  the DuckLake method of the same name, its rows as `{"schema": StructType JSON, "rows": [[...]]}` (timestamps in
  microseconds). The plugin converts values, nothing more; a wrong argument is an `invalid` error naming it.
- `metadata` (`namespace`, `table`, `name`: snapshots | files | table_info, optional `version` / `timestamp_us`):
  the rows of `lake.s.t.<name>` (METADATA_TABLES), as `call` gives them.
- `changes` (`namespace`, `table`, `start` / `end` snapshot ids or `start_us` / `end_us`, `start_inclusive`,
  `end_inclusive`): Spark's `CHANGES` clause, DuckLake's `table_changes` with Spark's changelog columns, as one
  Parquet file in the scratch folder listed in a file-sink log (`log`), and its Spark `schema`.
Errors come back as `{"error": {"kind": ..., "message": ...}}`; the plugin turns the kind into Spark's own
exception (`not_found`: NoSuchTable/NamespaceException, `exists`: Table/NamespaceAlreadyExistsException) or an
AnalysisException naming the table and the message (`unsupported`, `invalid` bad input, `conflict` a concurrent
commit won, `error` anything else).

`spark_catalog_conf` gives the Spark confs a session needs to use the plugin.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import sys
import tempfile
import threading
import uuid
from datetime import date, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from .catalog.changes.data import AppendFiles, InlineInsert
from .catalog.changes.partitioning import current_spec
from .catalog.inlined import codec as inlined
from .dataplane.arrow.arrow_values import spark_value
from .dataplane.arrow.delete_files import positions_as_of
from .dataplane.arrow.local_dml import stage_positions
from .dataplane.arrow.local_scan import ROWID, read_new_files, read_plan
from .dataplane.arrow.native_types import is_native
from .dataplane.arrow.scan_columns import FILE, POS
from .dataplane.arrow.storage import delete_paths, filesystem
from .dataplane.arrow.threshold import is_small, threshold_of
from .dataplane.arrow.write_options import WriteOptions
from .dataplane.spark.conform import conform_arrow, plan_columns
from .dataplane.spark.file_log import SCAN_LOG_PREFIX, write_file_log
from .dataplane.spark.scan_plan import ScanPlan
from .dataplane.spark.session import REQUIRED_CONF
from .dataplane.spark.types import to_spark_schema
from .dataplane.spark.write import describe_file, writer_options
from .errors import (
    AlreadyExistsError,
    ConflictError,
    ConstraintError,
    DuckLakeError,
    InvalidArgumentError,
    InvalidExpressionError,
    InvalidNameError,
    NotFoundError,
    ReadOnlyError,
    SchemaMismatchError,
)
from .lake import DuckLake
from .operations.delete_update import delete_op, insert_versions
from .operations.history import change_plan
from .operations.history_arrow import changes as change_rows
from .operations.write import load_layout, write_arrow_files
from .spec import types
from .spec.internal_columns import ROW_ID_COLUMN
from .spec.model import Column, DataFile, NewDataFile, PartitionSpec, TableInfo
from .spec.uuid7 import new_uuid

CATALOG_CLASS = "sparkducklake.DuckLakeCatalog"
CATALOG_JAR = Path(__file__).parent / "dataplane" / "spark" / "jvm" / "spark-ducklake-catalog.jar"
TOKEN_HEADER = "X-DuckLake-Token"
# DuckLake.attach keywords a catalog option may carry (values arrive as strings from Spark's options).
_INT_OPTIONS = {"data_inlining_row_limit", "snapshot_version", "ducklake_max_retry_count", "ducklake_retry_wait_ms"}
_BOOL_OPTIONS = {"create_if_missing", "read_only", "automatic_migration", "override_data_path", "encrypted"}
_FLOAT_OPTIONS = {"ducklake_retry_backoff"}
_TEXT_OPTIONS = {"author", "metadata_schema", "metadata_catalog", "small_data_threshold", "ducklake_version"}


class UnsupportedRequestError(InvalidArgumentError):
    """A request the catalog plugin cannot serve yet (a scan Spark's Parquet reader cannot do alone, a write or
    a change it does not take): the reply names the cause."""


def spark_catalog_conf(name: str, url: str, data_path: str | None = None, **attach_options: Any) -> dict[str, str]:
    """Every Spark conf a session needs to query the lake as catalog `name` in plain Spark SQL (`SELECT * FROM
    name.main.t`): the plugin class, its options (`url`, `data_path`, the DuckLake.attach keywords), our jar and
    the Parquet field-id confs our reads rely on. Pass it to `SparkSession.builder.config(map=...)`. The plugin
    starts `python -m spark_ducklake.catalog_service` with this interpreter (`python` option) unless
    `python=` names another."""
    if not name or not name.replace("_", "").isalnum():
        raise InvalidArgumentError(f"catalog name {name!r} must be letters, digits and underscores")
    if not CATALOG_JAR.is_file():
        raise InvalidArgumentError(f"the catalog plugin's jar {CATALOG_JAR} was not built (scripts/build_jar.sh "
                                   "needs a JDK)")
    prefix = f"spark.sql.catalog.{name}"
    conf = {prefix: CATALOG_CLASS, f"{prefix}.url": url, "spark.jars": str(CATALOG_JAR)}
    conf[f"{prefix}.python"] = str(attach_options.pop("python", None) or sys.executable)
    if data_path is not None:
        conf[f"{prefix}.data_path"] = str(data_path)
    for key, value in attach_options.items():
        _attach_value(key, str(value))  # refuse unknown keywords here, not at the first query
        if value is not None:
            conf[f"{prefix}.{key}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return conf | REQUIRED_CONF


def _attach_value(key: str, text: str):
    """A catalog option's string as the DuckLake.attach keyword's value."""
    if key in _INT_OPTIONS:
        return int(text)
    if key in _FLOAT_OPTIONS:
        return float(text)
    if key in _BOOL_OPTIONS:
        if text.lower() not in ("true", "false"):
            raise InvalidArgumentError(f"catalog option {key} must be true or false, not {text!r}")
        return text.lower() == "true"
    if key in _TEXT_OPTIONS:
        return text
    raise InvalidArgumentError(f"unknown catalog option {key!r} (DuckLake.attach takes no such keyword)")


def attach(config: dict[str, Any]) -> DuckLake:
    """The lake a plugin's options describe (`url`, `data_path`, attach keywords as strings)."""
    if not config.get("url"):
        raise InvalidArgumentError("the lake catalog needs a `url` option (the catalog database)")
    keywords = {k: _attach_value(k, str(v)) for k, v in config.items() if k not in ("url", "data_path", "python")}
    return DuckLake.attach(config["url"], config.get("data_path"), **keywords)


class CatalogService:
    """Answers the plugin's requests on one lake (each request is independent; the lake handle is shared)."""

    def __init__(self, lake: DuckLake, log_root: str):
        self.lake = lake
        self.log_root = log_root
        self.lock = threading.Lock()  # one request at a time: the handle's caches are not shared across threads
        self.scratch: str | None = None  # materialized inlined rows (made on first need, removed with log_root)
        # A materialized file's rows: where each came from (`_dl_file`, `_dl_pos`, `rowid` as read_plan gives
        # them), so a DELETE / UPDATE that read them through the plugin finds the rows it changes.
        self.origins: dict[str, pa.Table] = {}

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request (errors as `{"error": ...}`)."""
        with self.lock:
            return self._answer(request)

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            op = request.get("op")
            handler = {"namespaces": self.namespaces, "tables": self.tables, "table": self.table,
                       "scan": self.scan, "create_namespace": self.create_namespace,
                       "drop_namespace": self.drop_namespace, "create_table": self.create_table,
                       "drop_table": self.drop_table, "alter_table": self.alter_table,
                       "rename_table": self.rename_table,
                       "begin_write": self.begin_write, "commit_write": self.commit_write,
                       "procedures": self.procedures, "procedure": self.procedure, "call": self.call,
                       "commit_row_level": self.commit_row_level, "metadata": self.metadata,
                       "changes": self.changes}.get(op)
            if handler is None:
                raise InvalidArgumentError(f"unknown catalog service request {op!r}")
            return handler(request)
        except NotFoundError as e:
            return {"error": {"kind": "not_found", "message": str(e)}}
        except AlreadyExistsError as e:
            return {"error": {"kind": "exists", "message": str(e)}}
        except UnsupportedRequestError as e:
            return {"error": {"kind": "unsupported", "message": str(e)}}
        except _INVALID as e:  # bad input: the user's statement, not our code, is at fault
            return {"error": {"kind": "invalid", "message": str(e)}}
        except ConflictError as e:
            return {"error": {"kind": "conflict", "message": str(e)}}
        except DuckLakeError as e:
            return {"error": {"kind": "error", "message": str(e)}}
        except Exception as e:  # noqa: BLE001 - a reply naming the cause, never a dropped connection
            return {"error": {"kind": "error", "message": f"{type(e).__name__}: {e}"}}

    def namespaces(self, _request: dict[str, Any]) -> dict[str, Any]:
        return {"namespaces": self.lake.schemas()}

    def tables(self, request: dict[str, Any]) -> dict[str, Any]:
        schema = _text(request, "namespace")
        if schema not in self.lake.schemas():
            raise NotFoundError(f"schema {schema!r} not found")
        return {"tables": [t.name for t in self.lake.tables(schema)]}

    def table(self, request: dict[str, Any]) -> dict[str, Any]:
        plan = self._plan(request)
        with self.lake.context.engine.connect() as conn:
            spec = current_spec(conn, plan.table.table_id, plan.snapshot_id)
        return {"snapshot": plan.snapshot_id, "schema": to_spark_schema(plan.table.columns).json(),
                "partitioning": spark_partitioning(spec, plan.table.columns)}

    def scan(self, request: dict[str, Any]) -> dict[str, Any]:
        plan = self._plan(request)
        name = f"{_text(request, 'namespace')}.{_text(request, 'table')}"
        converted = _check_plain(plan, name)
        if converted:  # every row read here with pyarrow, as Spark's reader cannot read the files alone
            whole = self._materialize_all(plan, name, converted)
            paths, sizes, deletes = [whole], [os.path.getsize(whole)], {}
        else:
            files, dirty = _split_dirty(plan)
            plain = dataclasses.replace(plan, files=files)
            paths = files.full_paths() if hasattr(files, "full_paths") else [f.path for f in files]
            sizes = [int(s) for s in _sizes(plain)]
            deletes = _deleted_positions(plain)
            extra = self._materialize(plan, dirty, name)
            if extra is not None:
                paths, sizes = [*paths, extra], [*sizes, os.path.getsize(extra)]
        folder = tempfile.mkdtemp(prefix=SCAN_LOG_PREFIX, dir=self.log_root)
        write_file_log(folder, paths, sizes)
        # names_stable False: a column was renamed or a name held by two columns; the plugin then pushes no filter
        # into the Parquet reader, whose row-group filters match file columns by name.
        return {"log": folder, "files": len(paths), "snapshot": plan.snapshot_id, "names_stable": plan.names_stable,
                "deletes": deletes}

    def metadata(self, request: dict[str, Any]) -> dict[str, Any]:
        """A table's metadata table (`name`: one of METADATA_TABLES) at the snapshot the request resolves to
        (`version` / `timestamp_us`: VERSION / TIMESTAMP AS OF, else the current one), as a procedure's rows."""
        schema, table = _name(request)
        kind = METADATA_TABLES.get(_text(request, "name"))
        if kind is None:
            raise NotFoundError(f"table {schema}.{table} has no metadata table {request.get('name')!r} (it has "
                                f"{', '.join(sorted(METADATA_TABLES))})")
        version = request.get("version")
        if version is not None and not str(version).isdigit():
            raise InvalidArgumentError(f"VERSION AS OF takes a snapshot id, not {version!r}")
        stamp = request.get("timestamp_us")
        when = None if stamp is None else _EPOCH + timedelta(microseconds=int(stamp))
        with self.lake.context.connect() as conn:
            snapshot = self.lake.context.snapshot_id(conn, None if version is None else int(version), when)
        self.lake.context.table_info(f"{schema}.{table}", version=snapshot)  # NotFoundError if it did not exist
        rows = kind.run(self.lake, schema, table, snapshot)
        return {"snapshot": snapshot, "schema": json.dumps(_struct(kind.columns)),
                "rows": [[_result_value(v) for v in row] for row in rows]}

    def changes(self, request: dict[str, Any]) -> dict[str, Any]:
        """The change feed of `CHANGES FROM ... TO ...` (Spark's loadChangelog): the rows DuckLake's
        `table_changes` gives for the range, with Spark's changelog columns (`_change_type`, `_commit_version`,
        `_commit_timestamp`) in place of its change_type and snapshot_id, as one Parquet file in the service's
        scratch folder, listed in a file-sink log the plugin reads with Spark's Parquet scan."""
        schema, table = _name(request)
        name = f"{schema}.{table}"
        start, end = self._change_range(request)
        plan = change_plan(self.lake.context, name, start, end)
        columns = plan.table.columns
        taken = sorted(CHANGE_COLUMNS & {c.name.lower() for c in columns})
        if taken:
            raise UnsupportedRequestError(f"the lake catalog cannot show the changes of {name}: its columns "
                                          f"{', '.join(taken)} have the names of the change feed's own columns")
        if not all(is_native(c) for c in columns) or plan.delete_keys or any(f.encryption_key for f in plan.files):
            raise UnsupportedRequestError(f"the lake catalog cannot show the changes of {name} in Spark SQL yet: it "
                                          "has a column type Spark's Parquet reader cannot decode or encrypted "
                                          "files; use DuckLake.table_changes")
        # The changes between two snapshots never change: one file per (table, range), made once and reused, so
        # repeated CHANGES queries do not pile files up in the scratch folder.
        path = self._scratch_path("changes-", plan.table.table_id, plan.start, plan.end)
        rows_count = self._write_changes(plan, path) if not os.path.exists(path) else pq.read_metadata(path).num_rows
        folder = tempfile.mkdtemp(prefix=SCAN_LOG_PREFIX, dir=self.log_root)
        write_file_log(folder, [path], [os.path.getsize(path)])
        # Read by name, not field id: Spark's changelog columns carry no field-id metadata to match ids with.
        spark_schema = _without_field_ids(json.loads(to_spark_schema(columns).json()))
        spark_schema["fields"] += _struct(CHANGE_SPARK_COLUMNS)["fields"]
        return {"log": folder, "schema": json.dumps(spark_schema), "start": plan.start, "end": plan.end,
                "rows": rows_count}

    def _write_changes(self, plan, path: str) -> int:
        """The change feed of `plan` with Spark's changelog columns, written to `path` (atomically); its rows."""
        columns = plan.table.columns
        rows = change_rows(plan)  # snapshot_id, rowid, change_type, the table's columns
        times = {s.snapshot_id: s.snapshot_time for s in self.lake.snapshots()}
        ids = rows.column("snapshot_id").cast(pa.int64())
        stamps = pa.array([times.get(i) for i in ids.to_pylist()], pa.timestamp("us", tz="UTC"))
        data = conform_arrow(rows.select([c.name for c in columns]), plan.table)
        fields = list(types.to_parquet_schema(columns))
        arrays = [data.column(i) for i in range(len(fields))]
        arrays += [rows.column("rowid").cast(pa.int64()), rows.column("change_type").cast(pa.string()), ids, stamps]
        fields += [pa.field("rowid", pa.int64()), pa.field("_change_type", pa.string()),
                   pa.field("_commit_version", pa.int64()), pa.field("_commit_timestamp", pa.timestamp("us", "UTC"))]
        _write_parquet(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), path)
        return rows.num_rows

    def _change_range(self, request: dict[str, Any]) -> tuple[int | datetime, int | datetime]:
        """The inclusive (start, end) of a change request: snapshot ids (`start`, `end`) or times in microseconds
        (`start_us`, `end_us`); no end is the current snapshot; an exclusive bound moves by one id or one
        microsecond (timestamps are microseconds)."""
        step_in, step_out = int(not request.get("start_inclusive", True)), int(not request.get("end_inclusive", True))
        if request.get("start_us") is not None:
            start: int | datetime = _EPOCH + timedelta(microseconds=int(request["start_us"]) + step_in)
            end_us = request.get("end_us")
            end: int | datetime = (self.lake.current_snapshot() if end_us is None
                                   else _EPOCH + timedelta(microseconds=int(end_us) - step_out))
            return start, end
        first, last = request.get("start", 0), request.get("end")
        for bound in (first, last):
            if bound is not None and not str(bound).isdigit():
                raise InvalidArgumentError(f"CHANGES FROM VERSION takes snapshot ids, not {bound!r}")
        if last is None:
            return int(first) + step_in, self.lake.current_snapshot()
        return int(first) + step_in, int(last) - step_out

    def _materialize(self, plan: ScanPlan, dirty: list[DataFile], name: str) -> str | None:
        """The snapshot's inlined rows plus the rows of the files with inlined deletes (those deletes applied),
        as one Parquet file under the table's field ids in the service's scratch folder; None when there are
        none. The rows at a snapshot never change, so the file is named by (table, snapshot, files) and reused."""
        has_rows = plan.inlined is not None and plan.inlined.num_rows > 0
        if not has_rows and not dirty:
            return None
        size = sum(f.file_size_bytes for f in dirty)
        if dirty and not is_small(threshold_of(self.lake.context), size):
            raise UnsupportedRequestError(
                f"the lake catalog cannot read {name} at snapshot {plan.snapshot_id} in Spark SQL yet: it has "
                f"inlined deletes in {len(dirty)} data files ({size} bytes, above the small-data threshold the "
                "service rewrites them under); flush_inlined_data writes them as delete files")
        ids = sorted(f.data_file_id for f in dirty)
        path = self._scratch_path("", plan.table.table_id, plan.snapshot_id, ids)
        if os.path.exists(path):
            return path
        wanted = set(ids)
        part = dataclasses.replace(plan, files=dirty, inlined_deletes={
            k: v for k, v in (plan.inlined_deletes or {}).items() if k in wanted})
        rows = self._scan_rows(part, path)
        schema = types.to_parquet_schema(plan.table.columns)
        _write_parquet(pa.Table.from_arrays([rows.column(i) for i in range(len(schema))], schema=schema), path)
        return path

    def _materialize_all(self, plan: ScanPlan, name: str, causes: list[str]) -> str:
        """Every row of the scan (inlined, in files, deletes applied, defaults filled in) read with pyarrow and
        written as one Parquet file of Spark's types (docs/types.md: uuid, time as text, timestamp_ns in
        microseconds) under the table's field ids, in the service's scratch folder: for tables Spark's Parquet
        reader cannot read alone (`causes`), up to the small-data threshold. Named by (table, snapshot, files)."""
        files = list(plan.files)  # DataFiles, from a columnar FileList too
        size = sum(f.file_size_bytes for f in files)
        if not is_small(threshold_of(self.lake.context), size):
            raise UnsupportedRequestError(
                f"the lake catalog cannot read {name} at snapshot {plan.snapshot_id} in Spark SQL yet: it has "
                f"{', '.join(causes)}, which the service reads for Spark up to the small-data threshold only "
                f"({size} bytes of files); read it with DuckLake.read")
        path = self._scratch_path("all-", plan.table.table_id, plan.snapshot_id,
                                  sorted(f.data_file_id for f in files))
        if os.path.exists(path):
            return path
        rows = self._scan_rows(dataclasses.replace(plan, files=files), path)
        _write_parquet(spark_readable(rows, plan.table.columns), path)
        return path

    def _scratch_path(self, prefix: str, *key: Any) -> str:
        """A Parquet file of the service's scratch folder (made on first need) named by `key`: rows that never
        change (a snapshot's, a change range's) asked for again land on the file already written."""
        if self.scratch is None:
            self.scratch = tempfile.mkdtemp(prefix="inlined-", dir=self.log_root)
        digest = hashlib.sha256(json.dumps(list(key)).encode()).hexdigest()[:32]
        return os.path.join(self.scratch, f"{prefix}{digest}.parquet")

    def _scan_rows(self, part: ScanPlan, path: str) -> pa.Table:
        """`part`'s rows in the table's Arrow types, for the scratch file `path`; where each row came from (data
        file, position, row id) is kept, so a DELETE/UPDATE/MERGE finding rows in that file locates them
        (`_locate`)."""
        rows = read_plan(part, row_ids=True, positions=True)
        self.origins[path] = rows.select([FILE, POS, ROWID])
        return conform_arrow(rows.drop_columns([FILE, POS, ROWID]), part.table)

    # ---- DDL: each request is one call of the Python API, one snapshot
    def create_namespace(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"snapshot": self.lake.create_schema(_text(request, "namespace"))}

    def drop_namespace(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"snapshot": self.lake.drop_schema(_text(request, "namespace"), cascade=bool(request.get("cascade")))}

    def create_table(self, request: dict[str, Any]) -> dict[str, Any]:
        name = ".".join(_name(request))
        keys = partition_keys(request.get("partitioning") or [])
        with self.lake.transaction() as tx:
            tx.create_table(name, spark_struct(request.get("schema")))
            if keys:
                tx.set_partitioning(name, keys)
        return {"snapshot": tx.snapshot_id}

    def drop_table(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"snapshot": self.lake.drop_table(".".join(_name(request)))}

    def rename_table(self, request: dict[str, Any]) -> dict[str, Any]:
        schema, table = _name(request)
        return {"snapshot": self.lake.rename_table(f"{schema}.{table}", _text(request, "new_name"))}

    def alter_table(self, request: dict[str, Any]) -> dict[str, Any]:
        """ALTER TABLE's changes (`{"change": add|drop|rename|type|nullable, "column": dotted path, ...}`) as one
        schema update, so one snapshot."""
        changes = request.get("changes") or []
        update = self.lake.update_schema(".".join(_name(request)))
        for change in changes:
            kind, column = change.get("change"), change.get("column")
            if not isinstance(column, str):
                raise InvalidArgumentError("ALTER TABLE change lacks its column")
            if kind == "add":
                update.add_column(column, spark_type(change.get("type")), nullable=bool(change.get("nullable", True)))
            elif kind == "drop":
                update.drop_column(column)
            elif kind == "rename":
                update.rename_column(column, _text(change, "new_name"))
            elif kind == "type":
                update.update_column_type(column, spark_type(change.get("type")))
            elif kind == "nullable":
                update.set_nullable(column, bool(change.get("nullable")))
            else:
                raise UnsupportedRequestError(f"ALTER TABLE {change.get('what') or kind} is not supported by the lake "
                                           "catalog (add, drop, rename column, type widening, SET/DROP NOT NULL are)")
        return {"snapshot": update.commit() if changes else None}

    # ---- writes: Spark's writer writes Parquet files to a staging folder; commit_write makes them one snapshot
    def begin_write(self, request: dict[str, Any]) -> dict[str, Any]:
        """Where the JVM writes a statement's files and how: the table's Spark schema with field ids (a table
        CTAS / RTAS creates: the columns it will get), the lake's Parquet options. Refused, naming the cause, for
        tables whose files Spark's plain Parquet writer cannot produce yet."""
        name = _name(request)
        create = request.get("create")
        if create is not None:
            columns = plan_columns(spark_struct(create.get("schema")))
            partition_keys(create.get("partitioning") or [])  # unknown transforms refused before Spark writes
            info = None
            staging_root = self.lake.context.data_path
        else:
            info = self.lake.context.table_info(name)
            columns = info.columns
            staging_root = info.path
        # DELETE writes only positions, UPDATE's new row versions are written here (insert_versions, partitioned
        # as DuckLake.update writes them): Spark's writer adds no data file of the table for either. Rows Spark
        # writes into a partitioned table are partitioned here at commit (_rewritten_files).
        row_level = request.get("row_level")
        causes = []
        if row_level != "delete" and not all(_spark_writes(c) for c in columns):
            causes.append("a column type Spark's plain Parquet writer cannot write with DuckLake field ids")
        options = WriteOptions.from_lake_options(self.lake.context.options_of(info))
        if options.encrypted or not isinstance(filesystem(staging_root)[0], pafs.LocalFileSystem):
            causes.append("encrypted files or object storage")
        if causes:
            raise UnsupportedRequestError(f"the lake catalog cannot write {name[0]}.{name[1]} in Spark SQL yet: it has "
                                       f"{', '.join(causes)}")
        staging = f"{staging_root.rstrip('/')}/_spark_staging-{uuid.uuid4().hex}/"
        return {"staging": staging, "schema": to_spark_schema(columns).json(),
                "options": writer_options(columns, options)}

    def commit_write(self, request: dict[str, Any]) -> dict[str, Any]:
        """Commit the files one statement wrote (`files`, under `staging`) as one snapshot: `mode` append,
        truncate (INSERT OVERWRITE, replace everything) or `overwrite` with `filters` (the rows they match are
        replaced); `create` {schema, partitioning, replace} creates (or replaces) the table in the same snapshot
        (CTAS, RTAS). Few rows are inlined as DuckLake.write inlines them. Nothing is committed on any error and
        the files are deleted."""
        name = _name(request)
        staging = _text(request, "staging")
        paths = [p for p in request.get("files") or [] if isinstance(p, str) and staging and p.startswith(staging)]
        try:
            snapshot = self._commit_files(request, name, paths)
        except BaseException:
            delete_paths(paths)
            raise
        finally:
            if staging:  # a CTAS whose query ran no write stages nothing
                delete_paths([staging], directories=True)
        return {"snapshot": snapshot}

    def _commit_files(self, request: dict[str, Any], name: tuple[str, str], paths: list[str]) -> int | None:
        mode = request.get("mode", "append")
        if mode not in ("append", "truncate", "overwrite", "dynamic"):
            raise InvalidArgumentError(f"unknown write mode {mode!r}")
        where = overwrite_predicate(request.get("filters") or []) if mode == "overwrite" else None
        create = request.get("create")
        qualified = f"{name[0]}.{name[1]}"
        ctx = self.lake.context
        with self.lake.transaction() as tx:
            if create is not None:
                if create.get("replace") and ctx.find(*name) is not None:
                    tx.drop_table(qualified)
                tx.create_table(qualified, spark_struct(create.get("schema")))
                keys = partition_keys(create.get("partitioning") or [])
                if keys:
                    tx.set_partitioning(qualified, keys)
                info, ref = tx.created(name)  # created above
                partitioned = bool(keys)
            else:
                info, ref = dataclasses.replace(tx.table_info(qualified)), None  # a copy: the layout is loaded in
                load_layout(ctx, info, tx.read_snapshot)
                partitioned = bool(info.partition and info.partition.keys)
            if mode == "dynamic" and partitioned:
                raise UnsupportedRequestError(f"the lake catalog cannot overwrite the partitions of {qualified} "
                                              "dynamically (overwritePartitions, partitionOverwriteMode=dynamic): "
                                              "use INSERT OVERWRITE (every row) or writeTo(...).overwrite(condition)")
            # Footers only: each file's rows and column stats, as our Spark writer describes its files.
            files = [f for f in (describe_file(p, info.columns) for p in sorted(paths)) if f.record_count]
            limit = ctx.inlining_limit(info if create is None else None)
            mode = "overwrite" if mode != "append" and create is None else "append"
            # Few rows are inlined as DuckLake.write inlines them; a new partitioned table's rows are partitioned by
            # DuckLake.write's own path (pyarrow in the service up to the small-data threshold, its Spark above).
            if sum(f.record_count for f in files) <= limit or (partitioned and create is not None):
                tx.write(read_new_files(files, info.columns), qualified, mode, where=where)
            else:
                if mode == "overwrite":  # stages the delete of the rows replaced (all, or those matched)
                    tx.write(read_new_files([], info.columns), qualified, "overwrite", where=where)
                written = self._rewritten_files(info, files, tx.read_snapshot) if _rewritten(info, partitioned) \
                    else adopt_files(files, info.path)
                tx.stage(AppendFiles(info, written, ref), files=[f.path for f in written])
        return tx.snapshot_id

    def _rewritten_files(self, table: TableInfo, files: list[NewDataFile], snapshot: int) -> list[NewDataFile]:
        """The rows of Spark's staged files written again as the table's files (`_rewritten`: Spark's writer does
        not split rows by DuckLake's partition values, bucket() included, nor give list elements and map keys and
        values their field ids): with pyarrow in the service, whatever their size, as the new versions of an
        UPDATE are."""
        written = write_arrow_files(self.lake.context, read_new_files(files, table.columns), table, snapshot,
                                    options_table=table, any_size=True)
        if written is None:
            raise UnsupportedRequestError(f"the lake catalog cannot write the table {table.qualified_name} in Spark "
                                          "SQL: its layout is written by Spark (use DuckLake.write)")
        return written

    # ---- CALL <catalog>.system.<name>(...): each procedure is one call of the Python API
    def procedures(self, _request: dict[str, Any]) -> dict[str, Any]:
        return {"procedures": sorted(PROCEDURES)}

    def procedure(self, request: dict[str, Any]) -> dict[str, Any]:
        """A procedure's parameters in order: name, the Spark type the plugin declares when the argument is not
        given (a given one is declared with its own type, so Spark casts nothing), whether it is required."""
        proc = _procedure(_text(request, "name"))
        return {"name": proc.name, "description": proc.description,
                "parameters": [{"name": p.name, "type": p.type, "required": p.required} for p in proc.params]}

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run a procedure with `args` ({name: {"type": Spark type name, "value": JSON}}, the ones given): its rows
        as `{"schema": StructType JSON, "rows": [[...]]}` (timestamps in microseconds, binary in base64)."""
        proc = _procedure(_text(request, "name"))
        given = request.get("args") or {}
        args = {p.name: p.convert(proc.name, given.get(p.name)) for p in proc.params}
        try:
            rows = proc.run(self.lake, args)
        except (ValueError, TypeError) as e:  # the API's own argument checks: the statement is at fault
            raise InvalidArgumentError(str(e)) from e
        return {"schema": json.dumps(_struct(proc.columns)),
                "rows": [[_result_value(v) for v in row] for row in rows]}

    # ---- DELETE / UPDATE / MERGE: Spark found the rows (by file path and position); the changes are staged here
    def commit_row_level(self, request: dict[str, Any]) -> dict[str, Any]:
        """Commit what one DELETE / UPDATE / MERGE statement wrote (all under `staging`) as one snapshot, after
        the snapshot its scan read (`snapshot`): deleted positions staged as the Python API stages them (ended
        files, inlined deletes or delete files), new row versions keeping their row ids, inserted rows inlined
        or adopted. Nothing is committed on any error and the files are deleted."""
        name = _name(request)
        staging = _text(request, "staging")

        def staged(key: str) -> list[str]:
            return [p for p in request.get(key) or [] if isinstance(p, str) and staging and p.startswith(staging)]

        try:
            return {"snapshot": self._commit_row_level(name, int(request["snapshot"]), staged("deletes"),
                                                       staged("updates"), staged("files"))}
        finally:
            delete_paths([staging], directories=True)

    def _commit_row_level(self, name: tuple[str, str], snapshot: int, deletes: list[str], updates: list[str],
                          inserts: list[str]) -> int | None:
        ctx = self.lake.context
        plan = self.lake.plan_scan(name, version=snapshot)
        limit = ctx.inlining_limit(plan.table)
        removed = [pq.read_table(p, columns=["file_path", "pos"]) for p in deletes]
        versions = [pq.read_table(p) for p in updates]
        removed += [t.select([_OLD_FILE, _OLD_POS]).rename_columns(["file_path", "pos"]) for t in versions]
        located = _locate(plan, pa.concat_tables(removed) if removed else None, self.origins)
        files = [f for f in (describe_file(p, plan.table.columns) for p in sorted(inserts)) if f.record_count]
        # the inlining limit holds for the statement's new rows: a MERGE's updated and inserted rows together
        new_rows = sum(t.num_rows for t in versions) + sum(f.record_count for f in files)
        ops: list = []
        written: list[str] = []
        try:
            if located is not None and located.num_rows:
                staged = stage_positions(plan, located.select([FILE, POS]), limit)
                written += [d.path for d in staged.delete_files]
                ops.append(delete_op(plan, staged))
            if versions:  # an updated row keeps its row id, as DuckLake.update does
                rows = pa.concat_tables(versions)
                ids = located.column(ROWID).slice(located.num_rows - rows.num_rows)
                data = conform_arrow(rows.drop_columns([_OLD_FILE, _OLD_POS]), plan.table)
                inserted = insert_versions(ctx, plan, data, ids, any_size=True, new_rows=new_rows)  # no Spark here
                if inserted is None:
                    raise UnsupportedRequestError(f"the lake catalog cannot write updated rows of {name[0]}.{name[1]}"
                                                  " keeping their row ids: its layout or types are written by Spark "
                                                  "(use DuckLake.update)")
                ops.append(inserted[0])
                written += inserted[1]
            if files:
                rows = read_new_files(files, plan.table.columns) if new_rows <= limit else None
                table = dataclasses.replace(plan.table)  # a copy: the layout is loaded in
                load_layout(ctx, table, snapshot)
                if rows is not None and inlined.inlinable(plan.table.columns, ctx.engine, rows):
                    ops.append(InlineInsert(plan.table, conform_arrow(rows, plan.table)))
                elif _rewritten(table, bool(table.partition and table.partition.keys)):  # partitioned, ids given
                    files = self._rewritten_files(table, files, snapshot)
                    written += [f.path for f in files]
                    ops.append(AppendFiles(table, files))
                else:
                    adopted = adopt_files(files, plan.table.path)
                    written += [f.path for f in adopted]
                    ops.append(AppendFiles(plan.table, adopted))
            if not ops:
                return None
        except BaseException:
            delete_paths(written)
            raise
        return ctx.commit(ops, read_snapshot=snapshot, staged_files=written)

    def _plan(self, request: dict[str, Any]) -> ScanPlan:
        name = (_text(request, "namespace"), _text(request, "table"))
        where = pruning_predicate(request.get("filters") or [])
        version = request.get("snapshot", request.get("version"))
        stamp = request.get("timestamp_us")
        when = None if stamp is None else datetime.fromtimestamp(int(stamp) / 1e6, timezone.utc)
        if version is not None and not str(version).isdigit():
            raise InvalidArgumentError(f"VERSION AS OF takes a snapshot id, not {version!r}")
        return self.lake.plan_scan(name, version=None if version is None else int(version), timestamp=when,
                                   where=where)


@dataclasses.dataclass(frozen=True)
class Param:
    """A procedure parameter: `type` is the Spark type declared when the argument is not given, `accepts` the
    Python values (after `argument_value`) the API takes for it, `what` how an error names them."""

    name: str
    type: str
    accepts: tuple[type, ...]
    what: str
    required: bool = False

    def convert(self, procedure: str, arg: Any) -> Any:
        """The argument as the API takes it (None: not given); a wrong kind of value names the argument."""
        value = None if arg is None else argument_value(arg.get("type"), arg.get("value"))
        if value is None:
            if self.required:
                raise InvalidArgumentError(f"argument {self.name} of {procedure} is required")
            return None
        ok = isinstance(value, self.accepts) and not (isinstance(value, bool) and bool not in self.accepts)
        if ok and isinstance(value, list):
            ok = all(isinstance(v, int) and not isinstance(v, bool) for v in value) if self.type == "array<bigint>" \
                else all(isinstance(v, str) for v in value)
        if not ok:
            raise InvalidArgumentError(f"argument {self.name} of {procedure} must be {self.what}, not "
                                       f"{arg.get('type')} {arg.get('value')!r}")
        return value


def argument_value(type_name: Any, value: Any) -> Any:
    """A CALL argument from the plugin (Spark's type name, its value as JSON) as a Python value: timestamps
    (microseconds; TIMESTAMP_NTZ taken as UTC) as datetimes, day-time intervals as timedeltas, dates as dates."""
    if value is None:
        return None
    name = str(type_name)
    if name in ("timestamp", "timestamp_ntz"):
        return _EPOCH + timedelta(microseconds=int(value))
    if name == "date":
        return date.fromordinal(_EPOCH_ORDINAL + int(value))
    if name.startswith("interval") and "year" not in name and "month" not in name:
        return timedelta(microseconds=int(value))
    return value


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_ORDINAL = _EPOCH.date().toordinal()
_WHEN = (datetime, timedelta, str)
_WHEN_TEXT = "a timestamp, an interval or a string such as '7 days'"
_SIZE = (int, str)
_SIZE_TEXT = "a byte count or a size such as '10MB'"


def _p(name: str, kind: str, required: bool = False) -> Param:
    """A parameter of one of the kinds the procedures take."""
    spark_type, accepts, what = _KINDS[kind]
    return Param(name, spark_type, accepts, what, required)


_KINDS: dict[str, tuple[str, tuple[type, ...], str]] = {
    "text": ("string", (str,), "a string"),
    "flag": ("boolean", (bool,), "true or false"),
    "count": ("bigint", (int,), "an integer"),
    "fraction": ("double", (int, float), "a number"),
    "size": ("bigint", _SIZE, _SIZE_TEXT),
    "when": ("timestamp", _WHEN, _WHEN_TEXT),
    "moment": ("timestamp", (datetime,), "a timestamp"),
    "ids": ("array<bigint>", (list,), "an array of snapshot ids"),
    "paths": ("string", (str, list), "a path or glob, or an array of them"),
    "value": ("string", (str, int, float, bool), "a string, number or boolean"),
}

# Result columns (name, Spark type JSON) of the reference's table functions, as the Python API returns them.
_CHANGES = {"type": "map", "keyType": "string", "valueType": {"type": "array", "elementType": "string",
                                                               "containsNull": True}, "valueContainsNull": True}
_SNAPSHOT_COLUMNS = (("snapshot_id", "long"), ("snapshot_time", "timestamp"), ("schema_version", "long"),
                     ("changes", _CHANGES), ("author", "string"), ("commit_message", "string"),
                     ("commit_extra_info", "string"))
_PATH_COLUMNS = (("path", "string"),)
_COMPACTION_COLUMNS = (("schema_name", "string"), ("table_name", "string"), ("files_processed", "long"),
                       ("files_created", "long"))
_OPTION_COLUMNS = (("option_name", "string"), ("description", "string"), ("value", "string"), ("scope", "string"),
                   ("scope_entry", "string"))


@dataclasses.dataclass(frozen=True)
class Procedure:
    """`CALL <catalog>.system.<name>(...)`: the parameters in positional order, the result columns, and the
    Python API call (`run(lake, args)` -> rows)."""

    name: str
    description: str
    params: tuple[Param, ...]
    columns: tuple[tuple[str, Any], ...]
    run: Any


def _set_option(lake: DuckLake, a: dict[str, Any]) -> list[tuple]:
    """The reference returns nothing: the option's rows as options() shows them after the change."""
    lake.set_option(a["option"], a["value"], table_name=a["table_name"], schema=a["schema"])
    return [tuple(r) for r in lake.options() if r.option_name == a["option"]]


def _checkpoint(lake: DuckLake, _a: dict[str, Any]) -> list[tuple]:
    """The reference returns nothing: how many rows each step returned (files merged, snapshots expired...)."""
    result = lake.checkpoint()
    return [(step, len(rows)) for step, rows in zip(CHECKPOINT_STEPS, result, strict=True)]


CHECKPOINT_STEPS = ("flush_inlined_data", "expire_snapshots", "merge_adjacent_files", "rewrite_data_files",
                    "cleanup_old_files", "delete_orphaned_files")

_OLD_FILES = (_p("older_than", "when"), _p("cleanup_all", "flag"), _p("dry_run", "flag"))
PROCEDURES: dict[str, Procedure] = {p.name: p for p in (
    Procedure("expire_snapshots", "Forget snapshots older than a time, or by id; returns them.",
              (_p("older_than", "when"), _p("versions", "ids"), _p("dry_run", "flag")), _SNAPSHOT_COLUMNS,
              lambda lake, a: lake.expire_snapshots(a["older_than"], a["versions"], bool(a["dry_run"]))),
    Procedure("cleanup_old_files", "Delete files scheduled for deletion; returns their paths.", _OLD_FILES,
              _PATH_COLUMNS, lambda lake, a: lake.cleanup_old_files(a["older_than"], bool(a["cleanup_all"]),
                                                                    bool(a["dry_run"]))),
    Procedure("delete_orphaned_files", "Delete files under the data path the catalog does not know.", _OLD_FILES,
              _PATH_COLUMNS, lambda lake, a: lake.delete_orphaned_files(a["older_than"], bool(a["cleanup_all"]),
                                                                        bool(a["dry_run"]))),
    Procedure("merge_adjacent_files", "Merge small files of a table (or every table) into larger ones.",
              (_p("table_name", "text"), _p("schema", "text"), _p("min_file_size", "size"),
               _p("max_file_size", "size"), _p("max_compacted_files", "count")), _COMPACTION_COLUMNS,
              lambda lake, a: lake.merge_adjacent_files(a["table_name"], a["schema"], min_file_size=a["min_file_size"],
                                                        max_file_size=a["max_file_size"],
                                                        max_compacted_files=a["max_compacted_files"])),
    Procedure("rewrite_data_files", "Rewrite files with many deleted rows without them.",
              (_p("table_name", "text"), _p("schema", "text"), _p("delete_threshold", "fraction"),
               _p("max_compacted_files", "count")), _COMPACTION_COLUMNS,
              lambda lake, a: lake.rewrite_data_files(a["table_name"], a["schema"],
                                                      delete_threshold=a["delete_threshold"],
                                                      max_compacted_files=a["max_compacted_files"])),
    Procedure("flush_inlined_data", "Write inlined rows and deletes as Parquet files.",
              (_p("schema_name", "text"), _p("table_name", "text")),
              (("schema_name", "string"), ("table_name", "string"), ("rows_flushed", "long")),
              lambda lake, a: lake.flush_inlined_data(a["schema_name"], a["table_name"])),
    Procedure("add_data_files", "Register existing Parquet files in a table; returns their paths.",
              (_p("table_name", "text", required=True), _p("file_path", "paths", required=True),
               _p("schema", "text"), _p("allow_missing", "flag"), _p("ignore_extra_columns", "flag"),
               _p("hive_partitioning", "flag")), _PATH_COLUMNS,
              lambda lake, a: [(p,) for p in lake.add_data_files(
                  a["table_name"], a["file_path"], schema=a["schema"], allow_missing=bool(a["allow_missing"]),
                  ignore_extra_columns=bool(a["ignore_extra_columns"]), hive_partitioning=a["hive_partitioning"])]),
    Procedure("set_option", "Set an option globally, for a schema or for a table.",
              (_p("option", "text", required=True), _p("value", "value", required=True), _p("schema", "text"),
               _p("table_name", "text")), _OPTION_COLUMNS, _set_option),
    Procedure("checkpoint", "Run every maintenance function with the lake's options.", (),
              (("step", "string"), ("rows", "long")), _checkpoint),
    # metadata, as the reference's table functions show it
    Procedure("snapshots", "Every snapshot.", (), _SNAPSHOT_COLUMNS, lambda lake, _a: lake.snapshots()),
    Procedure("table_info", "Each table's file and delete-file counts and sizes.", (),
              (("table_name", "string"), ("schema_id", "long"), ("table_id", "long"), ("table_uuid", "string"),
               ("file_count", "long"), ("file_size_bytes", "long"), ("delete_file_count", "long"),
               ("delete_file_size_bytes", "long")), lambda lake, _a: lake.table_info()),
    Procedure("list_files", "A table's data files, each with its delete file.",
              (_p("table_name", "text", required=True), _p("schema", "text"), _p("snapshot_version", "count"),
               _p("snapshot_time", "moment")),
              (("data_file", "string"), ("data_file_size_bytes", "long"), ("data_file_footer_size", "long"),
               ("data_file_encryption_key", "binary"), ("delete_file", "string"),
               ("delete_file_size_bytes", "long"), ("delete_file_footer_size", "long"),
               ("delete_file_encryption_key", "binary")),
              lambda lake, a: lake.list_files(a["table_name"], a["schema"], snapshot_version=a["snapshot_version"],
                                              snapshot_time=a["snapshot_time"])),
    Procedure("options", "Every option set in the lake.", (), _OPTION_COLUMNS, lambda lake, _a: lake.options()),
    Procedure("settings", "The catalog type, our version and the data path.", (),
              (("catalog_type", "string"), ("extension_version", "string"), ("data_path", "string")),
              lambda lake, _a: lake.settings()),
)}


CHANGE_COLUMNS = {"rowid", "_change_type", "_commit_version", "_commit_timestamp"}
CHANGE_SPARK_COLUMNS = (("rowid", "long"), ("_change_type", "string"), ("_commit_version", "long"),
                        ("_commit_timestamp", "timestamp"))


@dataclasses.dataclass(frozen=True)
class MetadataTable:
    """`SELECT * FROM <catalog>.<schema>.<table>.<name>`: the result columns and the Python API call
    (`run(lake, schema, table, snapshot)` -> rows), the same rows as the procedure of the same name."""

    columns: tuple[tuple[str, Any], ...]
    run: Any


def _without_field_ids(node: Any) -> Any:
    """Spark's schema JSON without the Parquet field ids its struct fields carry, at every level."""
    if isinstance(node, dict):
        return {k: ({} if k == "metadata" else _without_field_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_without_field_ids(v) for v in node]
    return node


def _table_info_row(lake: DuckLake, schema: str, table: str, snapshot: int) -> list[tuple]:
    table_id = lake.table_info(f"{schema}.{table}", version=snapshot).table_id
    return [tuple(r) for r in lake.table_info(version=snapshot) if r.table_id == table_id]


METADATA_TABLES: dict[str, MetadataTable] = {
    # the lake's snapshots up to the one read (a table's history is the lake's: snapshot ids are lake-wide)
    "snapshots": MetadataTable(_SNAPSHOT_COLUMNS, lambda lake, _s, _t, snap: [
        r for r in lake.snapshots() if r.snapshot_id <= snap]),
    "files": MetadataTable(PROCEDURES["list_files"].columns, lambda lake, s, t, snap: lake.list_files(
        t, s, snapshot_version=snap)),
    "table_info": MetadataTable(PROCEDURES["table_info"].columns, _table_info_row),
}


def _procedure(name: str) -> Procedure:
    proc = PROCEDURES.get(name)
    if proc is None:
        raise NotFoundError(f"no procedure {name!r} in the lake catalog's `system` namespace (it has "
                            f"{', '.join(sorted(PROCEDURES))})")
    return proc


def _struct(columns: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """Spark's StructType JSON for result columns (all nullable)."""
    return {"type": "struct", "fields": [{"name": n, "type": t, "nullable": True, "metadata": {}}
                                         for n, t in columns]}


def _result_value(value: Any) -> Any:
    """A result value as JSON the plugin turns into Spark's internal value (timestamps in microseconds)."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return (moment - _EPOCH) // timedelta(microseconds=1)  # exact, unlike timestamp() * 1e6
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {str(k): _result_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_result_value(v) for v in value]
    return value


_OLD_FILE, _OLD_POS = "_dl_file_path", "_dl_pos"  # an updated row's old place, as the plugin writes it


def _local(path: str) -> str:
    """A data file's path as both sides write it (the JVM may add a `file:` scheme)."""
    return path[len("file:"):] if path.startswith("file:") else path


def _deleted_positions(plan: ScanPlan) -> dict[str, list[int]]:
    """The positions each of the plan's files with a delete file has deleted at the plan's snapshot."""
    if not getattr(plan.files, "deletes", None) and not any(getattr(f, "delete_file", None) for f in _objects(plan)):
        return {}
    return {_local(f.path): positions_as_of(f.delete_file, plan.snapshot_id).to_pylist()
            for f in plan.files if f.delete_file is not None}


def _locate(plan: ScanPlan, removed: pa.Table | None, origins: dict[str, pa.Table]) -> pa.Table | None:
    """The rows a statement removes (`file_path`, `pos` as its scan read them) as `_dl_file` (data file id, null
    for an inlined row), `_dl_pos` (position, or an inlined row's id) and `rowid`, in the same order."""
    if removed is None:
        return None
    by_path = {_local(f.path): f for f in plan.files}
    out_file: list[int | None] = []
    out_pos: list[int] = []
    out_id: list[int] = []
    row_ids: dict[str, pa.Array | None] = {}
    for path, pos in zip(removed.column("file_path").to_pylist(), removed.column("pos").to_pylist(), strict=True):
        path = _local(path)
        if path in origins:  # a row the service materialized: an inlined row or a file's with inlined deletes
            origin = origins[path]
            out_file.append(origin.column(FILE)[pos].as_py())
            out_pos.append(origin.column(POS)[pos].as_py())
            out_id.append(origin.column(ROWID)[pos].as_py())
            continue
        f = by_path.get(path)
        if f is None:
            raise ConflictError(f"{plan.table.qualified_name}: the statement read a file ({path}) that is not in "
                                f"snapshot {plan.snapshot_id}")
        if path not in row_ids:
            row_ids[path] = _embedded_row_ids(path)
        embedded = row_ids[path]
        out_file.append(f.data_file_id)
        out_pos.append(pos)
        out_id.append(embedded[pos].as_py() if embedded is not None and embedded[pos].is_valid
                      else (f.row_id_start or 0) + pos)
    return pa.table({FILE: pa.array(out_file, pa.int64()), POS: pa.array(out_pos, pa.int64()),
                     ROWID: pa.array(out_id, pa.int64())})


def _embedded_row_ids(path: str) -> pa.Array | None:
    """A data file's own row-id column (compacted or updated rows), None when it has none."""
    fs, inner = filesystem(path)
    if ROW_ID_COLUMN not in pq.read_schema(inner, filesystem=fs).names:
        return None
    return pq.read_table(inner, columns=[ROW_ID_COLUMN], filesystem=fs).column(0).combine_chunks().cast(pa.int64())


def adopt_files(files: list[NewDataFile], table_path: str) -> list[NewDataFile]:
    """The staged files moved to their final names in the table's folder (as dataplane/spark/write.py names them)."""
    fs = pafs.LocalFileSystem()
    moved = []
    try:
        for f in files:
            dst = f"{table_path}ducklake-{new_uuid()}.parquet"
            fs.create_dir(dst.rsplit("/", 1)[0], recursive=True)
            fs.move(f.path, dst)
            moved.append(dst)
            f.path = dst
    except BaseException:
        delete_paths(moved)
        raise
    return files


def spark_struct(schema_json: Any):
    """A Spark StructType from the JSON the JVM sends (pyspark's types need no JVM)."""
    from pyspark.sql.types import StructType

    if not isinstance(schema_json, str):
        raise InvalidArgumentError("catalog service request lacks the table's schema")
    return StructType.fromJson(json.loads(schema_json))


def spark_type(type_json: Any):
    """A Spark DataType from its JSON (Spark's DataType.json)."""
    if not isinstance(type_json, str):
        raise InvalidArgumentError("ALTER TABLE change lacks its type")
    field = {"name": "x", "type": json.loads(type_json), "nullable": True, "metadata": {}}
    return spark_struct(json.dumps({"type": "struct", "fields": [field]})).fields[0].dataType


# Errors that mean the statement was wrong (reported as such), not that our code failed.
_INVALID = (InvalidArgumentError, SchemaMismatchError, ConstraintError, InvalidNameError, InvalidExpressionError,
            ReadOnlyError)

_TRANSFORMS = {"identity", "years", "months", "days", "hours", "bucket"}


def partition_keys(transforms: list[dict[str, Any]]) -> list[str]:
    """Spark's PARTITIONED BY transforms (`{"transform", "column", "buckets"}`) as DuckLake.set_partitioning keys:
    `region`, `days(ts)` (set_partitioning maps years/months/days/hours to DuckLake 1.1's epoch transforms and
    refuses them on 1.0 catalogs), `bucket(16, id)`."""
    keys = []
    for t in transforms:
        name, column = t.get("transform"), t.get("column")
        if name not in _TRANSFORMS or not isinstance(column, str):
            raise UnsupportedRequestError(f"PARTITIONED BY {t.get('text') or name}: the lake catalog takes columns, "
                                       "years/months/days/hours(column) and bucket(n, column)")
        keys.append(column if name == "identity" else
                    f"bucket({int(t.get('buckets'))}, {column})" if name == "bucket" else f"{name}({column})")
    return keys


# DuckLake 1.1's epoch transforms are what Spark's (and Iceberg's) years/months/days/hours mean; the calendar
# transforms (year(ts) = 2026) have no Spark transform and are shown by their DuckLake names.
_SPARK_TRANSFORMS = {"epoch_year": "years", "epoch_month": "months", "epoch_day": "days", "epoch_hour": "hours"}


def spark_partitioning(spec: PartitionSpec, columns: list[Column]) -> list[dict[str, Any]]:
    """A table's partition keys as the plugin's Table.partitioning() builds them (`{"transform", "column",
    "buckets"}`): identity, bucket, Spark's years/months/days/hours, or a DuckLake calendar transform by name."""
    names = {c.column_id: c.name for c in columns}
    return [{"transform": "bucket" if key.buckets else _SPARK_TRANSFORMS.get(key.transform, key.transform),
             "column": names[key.column_id], "buckets": key.buckets} for key in spec.keys]


def overwrite_predicate(filters: list[dict[str, Any]]) -> str:
    """The Spark SQL condition of an overwrite's filters (the rows replaced); unlike pruning, a filter that
    cannot be written exactly is refused, since leaving it out would replace more rows."""
    parts = [_predicate(f) for f in filters]
    if not parts or None in parts:
        raise UnsupportedRequestError("an overwrite condition the lake catalog cannot pass on exactly (comparisons, "
                                   "IN, IS [NOT] NULL of top-level columns with numbers, strings or booleans)")
    return " AND ".join(parts)


_OPS = {"=", "<", "<=", ">", ">=", "in", "is_null", "not_null"}


def pruning_predicate(filters: list[dict[str, Any]]) -> str | None:
    """The Spark SQL conjunction of the filters Spark pushed (`{"column", "op", "values"}`), for the catalog's file
    pruning; a filter that cannot be written safely is left out (pruning then keeps more files, never fewer)."""
    parts = [part for part in (_predicate(f) for f in filters) if part is not None]
    return " AND ".join(parts) or None


def _predicate(condition: dict[str, Any]) -> str | None:
    column, op, values = condition.get("column"), condition.get("op"), condition.get("values") or []
    if not isinstance(column, str) or "`" in column or op not in _OPS:
        return None
    name = f"`{column}`"
    if op == "is_null":
        return f"{name} IS NULL"
    if op == "not_null":
        return f"{name} IS NOT NULL"
    literals = [_literal(v) for v in values]
    if not literals or None in literals:
        return None
    if op == "in":
        return f"{name} IN ({', '.join(literals)})"
    return f"{name} {op} {literals[0]}" if len(literals) == 1 else None


def _literal(value: Any) -> str | None:
    """A Spark SQL literal for a JSON value; None for what is not written here (strings with quotes or
    backslashes, whose escaping differs between dialects; nested values)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value) if value == value and abs(value) != float("inf") else None
    if isinstance(value, str) and "'" not in value and "\\" not in value:
        return f"'{value}'"
    return None


def _name(request: dict[str, Any]) -> tuple[str, str]:
    return _text(request, "namespace"), _text(request, "table")


def _text(request: dict[str, Any], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str):
        raise InvalidArgumentError(f"catalog service request lacks {key!r}")
    return value


def _sizes(plan: ScanPlan) -> list[int]:
    files = plan.files
    if hasattr(files, "column"):
        return files.column("file_size_bytes").to_pylist()
    return [f.file_size_bytes for f in files]


def _split_dirty(plan: ScanPlan):
    """(the plan's files without inlined deletes, the DataFiles with them): the latter are read by the service."""
    dirty_ids = {k for k, v in (plan.inlined_deletes or {}).items() if v}
    files = plan.files
    if not dirty_ids:
        return files, []
    if hasattr(files, "take"):
        ids = files.ids().to_pylist()
        keep = [i for i, fid in enumerate(ids) if fid not in dirty_ids]
        dirty = [i for i, fid in enumerate(ids) if fid in dirty_ids]
        return files.take(keep), [files[i] for i in dirty]
    return [f for f in files if f.data_file_id not in dirty_ids], [f for f in files if f.data_file_id in dirty_ids]


def _check_plain(plan: ScanPlan, name: str) -> list[str]:
    """What keeps Spark's Parquet reader from reading the plan's files alone and the service reads for it
    (`_materialize_all`: types Spark cannot decode at a table's top level, columns added with a default that older
    files lack); refuses, naming the cause, what the service cannot (the Python API reads all of it:
    `DuckLake.read`). Inlined rows and deletes are materialized without this."""
    table = plan.table
    converted, causes = [], []
    if not all(is_native(c) for c in table.columns):
        if all(is_native(c) or not c.children for c in table.columns):
            converted.append("a column type Spark's Parquet reader cannot decode")
        else:
            causes.append("a column type Spark's Parquet reader cannot decode inside a nested column")
    oldest = _smallest(plan, "begin_snapshot")
    if oldest is not None and any(c.initial_default is not None and c.added_snapshot is not None
                                  and oldest < c.added_snapshot for c in table.columns):
        converted.append("a column added with a default that older files lack")
    if _any_set(plan, "mapping_id") or _any_set(plan, "encryption_key"):
        causes.append("files without field ids or encrypted files")
    if _any_above(plan, "partial_max", plan.snapshot_id):
        causes.append("compacted files holding later snapshots' rows")
    if causes:
        raise UnsupportedRequestError(f"the lake catalog cannot read {name} at snapshot {plan.snapshot_id} in Spark "
                                   f"SQL yet: it has {', '.join(causes)}; read it with DuckLake.read")
    return converted


def _spark_writes(col: Column) -> bool:
    """Whether Spark's writer writes a column the plugin lets it write: a type Spark decodes, and inside nested
    columns none it would write unlike DuckDB (geometry, variant; the service rewrites nested columns, `_rewritten`,
    with pyarrow, which has no variant type)."""
    if not is_native(col):
        return False
    return not col.children or not any(c.type in ("geometry", "variant") for c in col.walk())


def _rewritten(table: TableInfo, partitioned: bool) -> bool:
    """Whether Spark's staged files are written again by the service rather than adopted: partitioned tables, and
    tables with list or map columns anywhere (Spark's writer gives elements, keys and values no field ids)."""
    return partitioned or any(c.type in ("list", "map") for top in table.columns for c in top.walk())


def spark_readable(data: pa.Table, columns: list[Column]) -> pa.Table:
    """A table's rows (its Arrow types, `conform_arrow`) as a Parquet file Spark's reader reads under the table's
    field ids: the columns Spark cannot decode (top-level uuid, time, timetz, interval, timestamp_ns) in the Spark
    types `to_spark_schema` declares, converted as the executors' pyarrow reader converts them."""
    schema = types.to_parquet_schema(columns)
    fields, arrays = [], []
    for i, col in enumerate(columns):
        field, array = schema.field(i), data.column(i)
        if not is_native(col):
            target = pa.timestamp("us") if col.type == "timestamp_ns" else pa.string()
            array = pa.array([spark_value(col, v) for v in array.to_pylist()], type=target)
            field = pa.field(field.name, target, True, metadata=field.metadata)
        fields.append(field)
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _write_parquet(data: pa.Table, path: str) -> None:
    """`data` as the Parquet file `path`, written aside and renamed: a half-written file is never a scan's file."""
    pending = f"{path}.{uuid.uuid4().hex}.tmp"
    pq.write_table(data, pending)
    os.replace(pending, path)


def _objects(plan: ScanPlan) -> list:
    return [] if hasattr(plan.files, "column") else list(plan.files)


def _any_set(plan: ScanPlan, column: str) -> bool:
    if hasattr(plan.files, "column"):
        return plan.files.column(column).null_count < len(plan.files)
    return any(getattr(f, column, None) is not None for f in plan.files)


def _smallest(plan: ScanPlan, column: str) -> int | None:
    if hasattr(plan.files, "column"):
        return pc.min(plan.files.column(column)).as_py() if len(plan.files) else None
    return min((getattr(f, column) for f in plan.files), default=None)


def _any_above(plan: ScanPlan, column: str, bound: int) -> bool:
    if hasattr(plan.files, "column"):
        top = pc.max(plan.files.column(column)).as_py() if len(plan.files) else None
        return top is not None and top > bound
    return any((getattr(f, column, None) or 0) > bound for f in plan.files)


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
    """`python -m spark_ducklake.catalog_service`: read the configuration line from stdin, then serve."""
    line = sys.stdin.readline()
    try:
        config = json.loads(line)
        serve(config)
    except (ValueError, DuckLakeError) as e:
        print(json.dumps({"error": {"kind": "error", "message": str(e)}}), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
