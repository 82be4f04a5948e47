"""A table's data files held as columns (pyarrow), with DataFile objects made only when someone looks at them.

Planning a 100k-file table used to be dominated by per-row Python work: the database driver made a tuple of 13
Python objects per file, then a DataFile was built from each. Here the catalog rows arrive as one text value per
column, aggregated by the database (`group_concat` on SQLite, `string_agg` on PostgreSQL) and split and parsed by
pyarrow, so loading 100k files makes a few dozen Python objects. Columns most catalogs leave NULL (or TRUE, for
path_is_relative) on every row come only for the rows that differ, as 'id,value' pairs (a FILTER clause: the usual
rows cost the database a comparison instead of a text value each). `FileList` is a read-only sequence of DataFile
over those columns: `len()` and the columns cost nothing, and the first element access builds every DataFile once
(later accesses return the same objects, which callers may annotate, as `mark_absent_columns` does). A scan of a
list whose objects were never built takes paths, sizes and the rest from the columns (dataplane/spark/scan.py), so
reading a 100k-file table makes no DataFile at all.

Other catalog databases (MySQL caps GROUP_CONCAT; DuckDB's aggregates run in parallel) fetch rows as before.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, TypeGuard, overload

import pyarrow as pa
import pyarrow.compute as pc
import sqlalchemy as sa

from ...spec import paths
from ...spec.model import DataFile, DeleteFile, TableInfo
from ..database.spec_tables import T
from .reader import build_files, driver_rows, no_gc, visible

# ducklake_data_file columns a scan needs, in DataFile's order (file_order only sorts).
NAMES = ("data_file_id", "path", "path_is_relative", "record_count", "file_size_bytes", "footer_size",
         "row_id_start", "begin_snapshot", "partial_max", "partition_id", "mapping_id", "file_order",
         "encryption_key")
_TEXT = {"path", "encryption_key"}
SCHEMA = pa.schema([(n, pa.string() if n in _TEXT else pa.int64()) for n in NAMES])
# Separators no value of the column holds: numbers and base64 keys never contain a comma; a path holding a
# newline makes the split miscount, which is checked (the rows are then fetched one by one).
_SEPARATOR = {"path": "\n", "encryption_key": ","}
# Columns most catalogs fill alike on every row (name -> the usual value): fetched only where a row differs.
SPARSE = {"path_is_relative": 1, "partial_max": None, "partition_id": None, "mapping_id": None, "file_order": None,
          "encryption_key": None}
DENSE = tuple(n for n in NAMES if n not in SPARSE)
AGGREGATE = {"sqlite": "group_concat", "postgresql": "string_agg"}
FEW = 200  # up to this many rows come faster as rows: the aggregate costs ~1 ms to build and parse


def fetch(conn: sa.Connection, table_id: int, condition: Any) -> pa.Table:
    """The table's ducklake_data_file rows meeting `condition` as columns (NAMES, unordered)."""
    aggregate = AGGREGATE.get(conn.dialect.name)
    if aggregate is not None:
        few = file_rows(conn, table_id, condition, limit=FEW + 1)  # a first look settles which way
        if len(few) <= FEW:
            return _as_columns(few)
        found = _fetch_aggregated(conn, table_id, condition, aggregate)
        if found is not None:
            return found
    return _as_columns(file_rows(conn, table_id, condition))


def _fetch_aggregated(conn: sa.Connection, table_id: int, condition: Any, aggregate: str) -> pa.Table | None:
    # One row: the count, then each column as one text value. Aggregates of one query see the rows in the same
    # order (PostgreSQL's parallel partial aggregates are combined state by state), so the columns line up. Text
    # values are capped at ~1 GB by both databases: some 15M files.
    df = T["ducklake_data_file"]
    row = conn.execute(sa.select(*_aggregates(aggregate)).where(df.c.table_id == table_id, condition)).one()
    count = row[0]
    if not count:
        return SCHEMA.empty_table()
    texts = dict(zip(DENSE + tuple(SPARSE), row[1:], strict=True))
    columns = {}
    for name in DENSE:
        columns[name] = parse_joined(texts[name], _SEPARATOR.get(name, ","), SCHEMA.field(name).type, count)
        if columns[name] is None:
            return None
    for name, usual in SPARSE.items():
        columns[name] = _scatter(texts[name], SCHEMA.field(name).type, usual, columns["data_file_id"])
        if columns[name] is None:
            return None
    return pa.Table.from_arrays([columns[n] for n in NAMES], schema=SCHEMA)


@functools.cache
def _aggregates(aggregate: str) -> tuple[Any, ...]:
    """The select list: the count, each DENSE column as one text value ('' for NULL), then each SPARSE column as
    'id,value' pairs of the rows whose value is not the usual one (made once: small tables pay for building these
    expressions more than for the query)."""
    df = T["ducklake_data_file"]

    def text(name: str) -> Any:
        col: Any = df.c[name]
        if aggregate == "string_agg" and name not in _TEXT:  # SQLite's group_concat makes text of anything
            if name == "path_is_relative":
                col = sa.cast(col, sa.Integer)  # PostgreSQL's boolean as 1/0
            return sa.cast(col, sa.Text)
        return col

    def literal(value: str) -> Any:
        # Constants of ours written as literals: SQLite evaluates a bound parameter for every row, which doubled
        # the query's time.
        return sa.literal_column(f"'{value}'")

    parts = [sa.func.count()]
    for name in DENSE:
        value = sa.func.coalesce(text(name), literal(""))
        parts.append(getattr(sa.func, aggregate)(value, literal(_SEPARATOR.get(name, ","))))
    for name, usual in SPARSE.items():
        pair = text("data_file_id").concat(literal(",")).concat(sa.func.coalesce(text(name), literal("")))
        usual_value = sa.null() if usual is None else sa.true()  # path_is_relative's 1: TRUE, 1 on SQLite
        # FILTER: the usual rows (every row, for most columns of most catalogs) cost a comparison, no text
        parts.append(getattr(sa.func, aggregate)(pair, literal(",")).filter(df.c[name].is_distinct_from(usual_value)))
    return tuple(parts)


def _scatter(text: str | None, type_: pa.DataType, usual: int | None, ids: pa.Array) -> pa.Array | None:
    """A SPARSE column from its 'id,value' pairs (`text`; NULL: none) over the rows' `ids`, `usual` elsewhere;
    None when the pairs do not parse."""
    fill = pa.scalar(usual, type_)
    if text is None:
        return pa.array(pa.repeat(fill, len(ids)), type_) if usual is not None else pa.nulls(len(ids), type_)
    parts = pc.list_flatten(pc.split_pattern(pa.array([text], pa.large_string()), ","))
    if len(parts) % 2:
        return None
    keys, values = parts[0::2], parts[1::2]
    values = pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.large_string()), values)
    try:
        keys, values = keys.cast(pa.int64()), values.cast(type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. booleans stored as 'true': read as rows
        return None
    at = pc.index_in(ids, value_set=keys)  # each row's pair, or null
    return pc.if_else(pc.is_null(at), fill, values.take(at))


def parse_joined(text: str, separator: str, type_: pa.DataType, count: int) -> pa.Array | None:
    """`count` values joined by `separator` ('' for NULL) as an array of `type_`; None when the split gives
    another number of values (a separator inside a value)."""
    if len(text) == count - 1:
        return pa.nulls(count, type_)  # only separators: every value NULL (columns most catalogs leave empty)
    values = pc.list_flatten(pc.split_pattern(pa.array([text], pa.large_string()), separator))
    if len(values) != count:
        return None
    if text.startswith(separator) or text.endswith(separator) or separator * 2 in text:  # some NULL
        values = pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.large_string()), values)
    try:
        return values.cast(type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. booleans stored as 'true': read as rows
        return None


def file_rows(conn: sa.Connection, table_id: int, condition: Any, limit: int | None = None) -> list[tuple[Any, ...]]:
    """The rows meeting `condition` (at most `limit`) as the driver's tuples of NAMES (reader.build_files
    takes them)."""
    df = T["ducklake_data_file"]
    query = sa.select(*[sa.type_coerce(df.c[n], sa.BigInteger) if n == "path_is_relative" else df.c[n]
                        for n in NAMES]).where(df.c.table_id == table_id, condition).limit(limit)
    with no_gc():
        return driver_rows(conn, query)


def _as_columns(rows: list[tuple[Any, ...]]) -> pa.Table:
    if not rows:
        return SCHEMA.empty_table()
    columns = [list(values) for values in zip(*rows, strict=True)]
    relative = NAMES.index("path_is_relative")  # a driver's booleans (or text ones) as 1/0
    columns[relative] = [None if v is None else int(v.lower() in ("1", "true") if isinstance(v, str) else v)
                         for v in columns[relative]]
    return pa.Table.from_arrays([pa.array(values, SCHEMA.field(name).type)
                                 for name, values in zip(NAMES, columns, strict=True)], schema=SCHEMA)


def in_scan_order(rows: pa.Table) -> pa.Table:
    """Rows sorted as scans list files: by file_order (NULL last, as PostgreSQL), then id."""
    if rows.column("file_order").null_count == rows.num_rows:
        ids = rows.column("data_file_id").combine_chunks()
        if rows.num_rows < 2 or pc.all(pc.less(ids[:-1], ids[1:])).as_py():
            return rows  # rows mostly arrive in id order (no index serves an ORDER BY)
        keys = [("data_file_id", "ascending")]
    else:
        keys = [("file_order", "ascending"), ("data_file_id", "ascending")]
    return rows.take(pc.sort_indices(rows, sort_keys=keys))  # NULLs last: pyarrow's default


class FileList(Sequence[DataFile]):
    """The data files of one table as columns (`rows`, NAMES in scan order) plus their delete files; a read-only
    sequence of DataFile whose objects are built on first access and then kept."""

    def __init__(self, table: TableInfo, rows: pa.Table, deletes: dict[int, DeleteFile],
                 objects: list[DataFile | None] | None = None) -> None:
        self.table, self.rows, self.deletes = table, rows, deletes
        # [objects]: one per row once any element was looked at (None: not built yet); the holder is shared by
        # copies, so objects built through one copy serve the others (a cached list and what scans were given).
        self._shared: list[list[DataFile | None] | None] = [objects]
        self._complete: list[DataFile] | None = None  # the shared objects once known to be all built

    @property
    def _objects(self) -> list[DataFile | None] | None:
        return self._shared[0]

    # ---- the columns
    def column(self, name: str) -> pa.ChunkedArray:
        """One of NAMES as a pyarrow column, in the list's order."""
        return self.rows.column(name)

    def ids(self) -> pa.ChunkedArray:
        """The data file ids."""
        return self.rows.column("data_file_id")

    def take(self, indices: Sequence[int] | pa.Array) -> FileList:
        """The files at these positions, as a new list (objects already built are shared)."""
        indices = pa.array(indices, pa.int64()) if not isinstance(indices, pa.Array) else indices
        objects = None
        if self._objects is not None:
            objects = [self._objects[i] for i in indices.to_pylist()]
        return FileList(self.table, self.rows.take(indices), self.deletes, objects)

    def copy(self) -> FileList:
        """A new list over the same columns and objects (those built later through either included)."""
        twin = FileList(self.table, self.rows, self.deletes)
        twin._shared = self._shared
        return twin

    def with_deletes(self, deletes: dict[int, DeleteFile]) -> FileList:
        """The same files paired with other delete files (objects whose delete file changed are replaced)."""
        objects = None
        if self._objects is not None:
            get = deletes.get
            objects = [None if f is None else f if f.delete_file == get(f.data_file_id)
                       else replace(f, delete_file=get(f.data_file_id)) for f in self._objects]
        return FileList(self.table, self.rows, deletes, objects)

    def annotated(self) -> bool:
        """Whether DataFile objects were built (only they carry absent_columns, name_map, hive_values)."""
        return self._objects is not None

    def full_paths(self) -> list[str]:
        """Every file's absolute path, as DataFile.path, from the columns (no object built)."""
        path, rel = self.rows.column("path"), self.rows.column("path_is_relative")
        if len(self) and not path.null_count and not rel.null_count and pc.all(pc.equal(rel, 1)).as_py():
            base = pa.scalar(self.table.path, pa.string())  # the usual case: every path relative
            return pc.binary_join_element_wise(base, path, "").to_pylist()
        return [_full_path(self.table.path, p, r) for p, r in zip(path.to_pylist(), rel.to_pylist(), strict=True)]

    def objects_or_none(self) -> list[DataFile | None]:
        """The objects built so far, one per row (None where not built)."""
        return list(self._objects) if self._objects is not None else [None] * len(self)

    # ---- the sequence
    def __len__(self) -> int:
        return self.rows.num_rows

    @overload
    def __getitem__(self, index: int) -> DataFile: ...

    @overload
    def __getitem__(self, index: slice) -> list[DataFile]: ...

    def __getitem__(self, index: Any) -> Any:
        return self._built()[index]

    def __iter__(self) -> Iterator[DataFile]:
        return iter(self._built())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FileList | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable objects inside, as a list

    def __add__(self, other: Any) -> list[DataFile]:
        return list(self) + list(other)

    def __radd__(self, other: Any) -> list[DataFile]:
        return list(other) + list(self)

    def __repr__(self) -> str:
        return f"FileList({len(self)} files of table {self.table.table_id})"

    def _built(self) -> list[DataFile]:
        if self._complete is None or self._complete is not self._shared[0]:
            objects = self._shared[0]
            if objects is None or any(f is None for f in objects):
                self._shared[0] = self._build(objects)  # type: ignore[assignment]  # list invariance: now all built
            self._complete = self._shared[0]  # type: ignore[assignment]  # checked once: element access stays O(1)
        return self._complete  # type: ignore[return-value]

    def _build(self, known: list[DataFile | None] | None) -> list[DataFile]:
        base, table_id, get_delete = self.table.path, self.table.table_id, self.deletes.get
        columns = [self.rows.column(n).to_pylist() for n in NAMES]
        known = known if known is not None else [None] * len(self)
        out = []
        with no_gc():  # 100k acyclic objects
            for f, (file_id, path, rel, records, size, footer, row_start, begin, pmax, part, mapping, _order,
                    key) in zip(known, zip(*columns, strict=True), strict=True):
                if f is None:
                    f = DataFile(file_id, table_id, _full_path(base, path, rel), records, size, footer, row_start,
                                 begin, pmax, part, mapping, get_delete(file_id), encryption_key=key)
                out.append(f)
        return out


def _full_path(base: str, path: str | None, rel: int | None) -> str:
    # Relative unless stored as not relative (NULL: absolute only when it looks absolute).
    return base + (path or "") if rel or (rel is None and not paths.is_absolute(path or "")) else path or base


def load(conn: sa.Connection, table: TableInfo, snapshot_id: int, deletes: dict[int, DeleteFile],
         few: int = 0) -> Sequence[DataFile]:
    """The table's data files visible at the snapshot, paired with `deletes`: a FileList, or up to `few` files a
    plain list (a handful of DataFiles cost less than columns)."""
    condition = visible(T["ducklake_data_file"], snapshot_id)
    if few > 0:
        rows = file_rows(conn, table.table_id, condition, limit=few + 1)
        if len(rows) <= few:
            return build_files(rows, table, deletes)
    return FileList(table, in_scan_order(fetch(conn, table.table_id, condition)), deletes)


def field_values(files: Sequence[DataFile], name: str) -> list[Any]:
    """One DataFile field of every file (read from the columns of a FileList, building no object)."""
    if isinstance(files, FileList):
        return files.column(name).to_pylist()
    return [getattr(f, name) for f in files]


def nulls_in(files: Sequence[DataFile], name: str) -> int:
    """How many files have None as the field `name` (one of NAMES)."""
    if isinstance(files, FileList):
        return files.column(name).null_count
    return sum(getattr(f, name) is None for f in files)


def subset(files: Sequence[DataFile], indices: list[int]) -> Sequence[DataFile]:
    """The files at these positions, of the same kind as `files`."""
    if isinstance(files, FileList):
        return files.take(indices)
    return [files[i] for i in indices]


def full_paths(files: Sequence[DataFile]) -> list[str]:
    """Every file's absolute path (a FileList computes them from its columns, building no object)."""
    if isinstance(files, FileList):
        return files.full_paths()
    return [f.path for f in files]


def plain(files: Sequence[DataFile]) -> TypeGuard[FileList]:
    """Whether `files` is a FileList whose objects were never built: no file carries absent_columns, name_map or
    hive_values, so what a scan needs can be read from the columns."""
    return isinstance(files, FileList) and not files.annotated()
