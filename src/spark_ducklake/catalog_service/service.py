"""The catalog service's requests and replies: `CatalogService` answers each request the plugin sends, one at a
time on one lake handle, with the reply of the module that holds its op (in brackets below), and turns errors into
the kinds the plugin maps to Spark's exceptions.

Requests are `POST /` (server.py) with a JSON object naming an `op`:
- `namespaces` [tables.py]: the lake's schemas.
- `tables` [tables.py] (`namespace`): the schema's table names.
- `table` [tables.py] (`namespace`, `table`, optional `version` or `timestamp_us`): the table's Spark schema (JSON,
  with Parquet field ids) and the snapshot it resolves to.
- `scan` [scans.py] (`namespace`, `table`, `snapshot`, `filters`: the conjuncts Spark pushed, pruning files by the
  catalog's statistics): a file-sink log (`_spark_metadata/0`, as file_log.py writes for
  Python scans) of the data files to read, in a folder the caller reads with Spark's MetadataLogFileIndex and then
  removes, and `names_stable` (false: push no filter into the reader, which matches file columns by name). The
  snapshot's inlined rows, and the data files with inlined deletes (with those deletes applied), are materialized
  with pyarrow as one more Parquet file of the scan, written under the table's field ids in the service's own
  scratch folder (never the lake's data path). `deletes` maps each other file with a delete file to the
  positions deleted at the snapshot, which the plugin's reader skips. A table whose files Spark's reader cannot
  read alone but pyarrow can (types Spark cannot decode, columns added with a default older files lack) is read
  whole that way, up to the small-data threshold, as one file in Spark's types; other such scans (files without
  field ids, ...) are refused, naming the cause.
- DDL [tables.py], one snapshot each: `create_namespace`, `drop_namespace` (`cascade`), `create_table` (`schema`:
  Spark's StructType JSON, `partitioning`: Spark's transforms), `drop_table`, `rename_table` (`new_name`),
  `alter_table` (`changes`).
- `begin_write` [writes.py] (`namespace`, `table`, optional `create`, optional `row_level`: delete | update |
  merge, the statement that writes): where and how the JVM writes a statement's Parquet files (staging folder,
  Spark schema with field ids, Parquet options); `commit_write` (`staging`, `files`, `mode` append | truncate |
  overwrite with `filters` | dynamic, optional `create` for CTAS / RTAS): those files as one snapshot (a
  partitioned table's rows written again as its partitioned files).
- `commit_row_level` [row_level.py] (`namespace`, `table`, `snapshot` the statement's scan read, `staging`,
  `deletes`: Parquet files of (`file_path`, `pos`) rows to delete, `updates`: files of new row versions with the
  old row's `_dl_file_path` and `_dl_pos`, `files`: inserted rows): DELETE / UPDATE / MERGE as one snapshot,
  committed after that snapshot with the Python API's conflict rules (updated rows keep their row ids).
- `procedures` [procedures.py]: the names of the procedures `CALL <catalog>.system.<name>(...)` runs (PROCEDURES:
  the reference's maintenance functions, and snapshots / table_info / list_files / options / settings);
  `procedure` (`name`): its parameters in positional order (name, the Spark type declared when the argument is
  not given, required); `call` (`name`, `args`: `{parameter: {"type": Spark type name, "value": JSON}}` for the
  arguments given): one call of the DuckLake method of the same name, its rows as `{"schema": StructType JSON,
  "rows": [[...]]}` (timestamps in microseconds). The plugin converts values, nothing more; a wrong argument is
  an `invalid` error naming it.
- `metadata` [metadata_tables.py] (`namespace`, `table`, `name`: snapshots | files | table_info, optional
  `version` / `timestamp_us`): the rows of `lake.s.t.<name>` (METADATA_TABLES), as `call` gives them.
- `changes` [changes.py] (`namespace`, `table`, `start` / `end` snapshot ids or `start_us` / `end_us`,
  `start_inclusive`, `end_inclusive`): Spark's `CHANGES` clause, DuckLake's `table_changes` with Spark's changelog
  columns, as one Parquet file in the scratch folder listed in a file-sink log (`log`), and its Spark `schema`.
Errors come back as `{"error": {"kind": ..., "message": ...}}`; the plugin turns the kind into Spark's own
exception (`not_found`: NoSuchTable/NamespaceException, `exists`: Table/NamespaceAlreadyExistsException) or an
AnalysisException naming the table and the message (`unsupported`, `invalid` bad input, `conflict` a concurrent
commit won, `error` anything else).
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import (
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
from ..lake import DuckLake
from . import changes, metadata_tables, procedures, row_level, scans, tables, writes
from .fields import UnsupportedRequestError
from .scratch import Scratch

# Errors that mean the statement was wrong (reported as such), not that our code failed.
_INVALID = (InvalidArgumentError, SchemaMismatchError, ConstraintError, InvalidNameError, InvalidExpressionError,
            ReadOnlyError)


class CatalogService:
    """Answers the plugin's requests on one lake (each request is independent; the lake handle is shared)."""

    def __init__(self, lake: DuckLake, log_root: str):
        self.lake = lake
        self.log_root = log_root
        self.lock = threading.Lock()  # one request at a time: the handle's caches are not shared across threads
        self.scratch = Scratch(log_root)  # materialized rows (made on first need, removed with log_root)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request (errors as `{"error": ...}`)."""
        with self.lock:
            return self._answer(request)

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            op: Any = request.get("op")
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


    # Each op's reply lives in the module named for it; these pass it the lake (and the scratch files).
    def namespaces(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.namespaces(self.lake, request)

    def tables(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.tables(self.lake, request)

    def table(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.table(self.lake, request)

    def scan(self, request: dict[str, Any]) -> dict[str, Any]:
        return scans.scan(self.lake, self.scratch, request)

    def metadata(self, request: dict[str, Any]) -> dict[str, Any]:
        return metadata_tables.metadata(self.lake, request)

    def changes(self, request: dict[str, Any]) -> dict[str, Any]:
        return changes.changes(self.lake, self.scratch, request)

    def create_namespace(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.create_namespace(self.lake, request)

    def drop_namespace(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.drop_namespace(self.lake, request)

    def create_table(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.create_table(self.lake, request)

    def drop_table(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.drop_table(self.lake, request)

    def rename_table(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.rename_table(self.lake, request)

    def alter_table(self, request: dict[str, Any]) -> dict[str, Any]:
        return tables.alter_table(self.lake, request)

    def begin_write(self, request: dict[str, Any]) -> dict[str, Any]:
        return writes.begin_write(self.lake, request)

    def commit_write(self, request: dict[str, Any]) -> dict[str, Any]:
        return writes.commit_write(self.lake, request)

    def procedures(self, request: dict[str, Any]) -> dict[str, Any]:
        return procedures.procedures(request)

    def procedure(self, request: dict[str, Any]) -> dict[str, Any]:
        return procedures.procedure(request)

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        return procedures.call(self.lake, request)

    def commit_row_level(self, request: dict[str, Any]) -> dict[str, Any]:
        return row_level.commit_row_level(self.lake, self.scratch.origins, request)
