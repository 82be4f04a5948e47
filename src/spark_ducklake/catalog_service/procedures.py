"""`CALL <catalog>.system.<name>(...)`: the procedures the plugin offers (PROCEDURES: the reference's maintenance
functions, and snapshots / table_info / list_files / options / settings), each one call of the Python API, and the
replies naming them (`procedures`), describing one (`procedure`) and running one (`call`)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..errors import InvalidArgumentError, NotFoundError
from ..lake import DuckLake
from .fields import request_text
from .values import Param, param, result_struct, result_value

# Result columns (name, Spark type JSON) of the reference's table functions, as the Python API returns them.
_CHANGES = {"type": "map", "keyType": "string", "valueType": {"type": "array", "elementType": "string",
                                                               "containsNull": True}, "valueContainsNull": True}
SNAPSHOT_COLUMNS = (("snapshot_id", "long"), ("snapshot_time", "timestamp"), ("schema_version", "long"),
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

_OLD_FILES = (param("older_than", "when"), param("cleanup_all", "flag"), param("dry_run", "flag"))
PROCEDURES: dict[str, Procedure] = {p.name: p for p in (
    Procedure("expire_snapshots", "Forget snapshots older than a time, or by id; returns them.",
              (param("older_than", "when"), param("versions", "ids"), param("dry_run", "flag")), SNAPSHOT_COLUMNS,
              lambda lake, a: lake.expire_snapshots(a["older_than"], a["versions"], bool(a["dry_run"]))),
    Procedure("cleanup_old_files", "Delete files scheduled for deletion; returns their paths.", _OLD_FILES,
              _PATH_COLUMNS, lambda lake, a: lake.cleanup_old_files(a["older_than"], bool(a["cleanup_all"]),
                                                                    bool(a["dry_run"]))),
    Procedure("delete_orphaned_files", "Delete files under the data path the catalog does not know.", _OLD_FILES,
              _PATH_COLUMNS, lambda lake, a: lake.delete_orphaned_files(a["older_than"], bool(a["cleanup_all"]),
                                                                        bool(a["dry_run"]))),
    Procedure("merge_adjacent_files", "Merge small files of a table (or every table) into larger ones.",
              (param("table_name", "text"), param("schema", "text"), param("min_file_size", "size"),
               param("max_file_size", "size"), param("max_compacted_files", "count")), _COMPACTION_COLUMNS,
              lambda lake, a: lake.merge_adjacent_files(a["table_name"], a["schema"], min_file_size=a["min_file_size"],
                                                        max_file_size=a["max_file_size"],
                                                        max_compacted_files=a["max_compacted_files"])),
    Procedure("rewrite_data_files", "Rewrite files with many deleted rows without them.",
              (param("table_name", "text"), param("schema", "text"), param("delete_threshold", "fraction"),
               param("max_compacted_files", "count")), _COMPACTION_COLUMNS,
              lambda lake, a: lake.rewrite_data_files(a["table_name"], a["schema"],
                                                      delete_threshold=a["delete_threshold"],
                                                      max_compacted_files=a["max_compacted_files"])),
    Procedure("flush_inlined_data", "Write inlined rows and deletes as Parquet files.",
              (param("schema_name", "text"), param("table_name", "text")),
              (("schema_name", "string"), ("table_name", "string"), ("rows_flushed", "long")),
              lambda lake, a: lake.flush_inlined_data(a["schema_name"], a["table_name"])),
    Procedure("add_data_files", "Register existing Parquet files in a table; returns their paths.",
              (param("table_name", "text", required=True), param("file_path", "paths", required=True),
               param("schema", "text"), param("allow_missing", "flag"), param("ignore_extra_columns", "flag"),
               param("hive_partitioning", "flag")), _PATH_COLUMNS,
              lambda lake, a: [(p,) for p in lake.add_data_files(
                  a["table_name"], a["file_path"], schema=a["schema"], allow_missing=bool(a["allow_missing"]),
                  ignore_extra_columns=bool(a["ignore_extra_columns"]), hive_partitioning=a["hive_partitioning"])]),
    Procedure("set_option", "Set an option globally, for a schema or for a table.",
              (param("option", "text", required=True), param("value", "value", required=True), param("schema", "text"),
               param("table_name", "text")), _OPTION_COLUMNS, _set_option),
    Procedure("checkpoint", "Run every maintenance function with the lake's options.", (),
              (("step", "string"), ("rows", "long")), _checkpoint),
    # metadata, as the reference's table functions show it
    Procedure("snapshots", "Every snapshot.", (), SNAPSHOT_COLUMNS, lambda lake, _a: lake.snapshots()),
    Procedure("table_info", "Each table's file and delete-file counts and sizes.", (),
              (("table_name", "string"), ("schema_id", "long"), ("table_id", "long"), ("table_uuid", "string"),
               ("file_count", "long"), ("file_size_bytes", "long"), ("delete_file_count", "long"),
               ("delete_file_size_bytes", "long")), lambda lake, _a: lake.table_info()),
    Procedure("list_files", "A table's data files, each with its delete file.",
              (param("table_name", "text", required=True), param("schema", "text"), param("snapshot_version", "count"),
               param("snapshot_time", "moment")),
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


def _procedure(name: str) -> Procedure:
    proc = PROCEDURES.get(name)
    if proc is None:
        raise NotFoundError(f"no procedure {name!r} in the lake catalog's `system` namespace (it has "
                            f"{', '.join(sorted(PROCEDURES))})")
    return proc


def procedures(_request: dict[str, Any]) -> dict[str, Any]:
    return {"procedures": sorted(PROCEDURES)}


def procedure(request: dict[str, Any]) -> dict[str, Any]:
    """A procedure's parameters in order: name, the Spark type the plugin declares when the argument is not
    given (a given one is declared with its own type, so Spark casts nothing), whether it is required."""
    proc = _procedure(request_text(request, "name"))
    return {"name": proc.name, "description": proc.description,
            "parameters": [{"name": p.name, "type": p.type, "required": p.required} for p in proc.params]}


def call(lake: DuckLake, request: dict[str, Any]) -> dict[str, Any]:
    """Run a procedure with `args` ({name: {"type": Spark type name, "value": JSON}}, the ones given): its rows
    as `{"schema": StructType JSON, "rows": [[...]]}` (timestamps in microseconds, binary in base64)."""
    proc = _procedure(request_text(request, "name"))
    given = request.get("args") or {}
    args = {p.name: p.convert(proc.name, given.get(p.name)) for p in proc.params}
    try:
        rows = proc.run(lake, args)
    except (ValueError, TypeError) as e:  # the API's own argument checks: the statement is at fault
        raise InvalidArgumentError(str(e)) from e
    return {"schema": json.dumps(result_struct(proc.columns)),
            "rows": [[result_value(v) for v in row] for row in rows]}
