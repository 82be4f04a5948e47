"""Upgrading catalogs of DuckLake spec 0.3 and 0.4 to 1.0, and 1.0 to 1.1, in place, with the reference's result.

The reference (ducklake 1.5.x, `ATTACH ... (AUTOMATIC_MIGRATION)`) runs two steps:
0.3 -> 0.4 adds the macro, sort and variant-stats tables and a few columns, turns the old `partial_file_info`
text into `partial_max`, and makes `ducklake_schema_versions` per table; 0.4 -> 1.0 only bumps the version.
Every step here checks what is already there, so a half-done migration (MySQL commits DDL implicitly) can be
run again; the version row changes last.

1.0 -> 1.1 (the 1.1 reference's MigrateV10, asked for with a 1.1 `ducklake_version`): the inlined data tables'
system columns get their `_ducklake_` names first (so a conflict aborts while the catalog is still 1.0), then the
layout's new columns and `ducklake_view_column_tag` are added, the released 1.1's repairs run (`repairs.py`; not
for '1.1-dev1', whose build had none) and the version row is set.
"""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa

from ...errors import CatalogError
from .dialects import dialect_for
from .repairs import repair_for_v11
from .spec_tables import LAYOUTS, SPEC_VERSION, T, added_columns
from .versions import LATEST, V10, is_v11, layout_of, remember_version

# Versions the reference migrates that we migrate too; 0.4-dev1 is a 0.3 catalog with part of the 0.4 tables.
MIGRATABLE_VERSIONS = ("0.3", "0.4-dev1", "0.4")

_NEW_TABLES_V04 = ("ducklake_macro", "ducklake_macro_impl", "ducklake_macro_parameters", "ducklake_sort_info",
                   "ducklake_sort_expression", "ducklake_file_variant_stats")
# 'partial_max:<snapshot>' survives as partial_max; the older '<snapshot>:<rows>|...' form becomes NULL.
_PARTIAL_MAX = re.compile(r"partial_max:([0-9]+)")
_BIGINT_MAX = 2**63 - 1


def is_migratable(version: str | None) -> bool:
    """Whether `migrate` can bring a catalog of this spec version to 1.0."""
    return version in MIGRATABLE_VERSIONS


def migrate(conn: sa.Connection, version: str) -> None:
    """Upgrade a 0.3/0.4 catalog to spec 1.0 inside the caller's transaction."""
    if not is_migratable(version):
        raise CatalogError(f"cannot migrate a DuckLake {version} catalog; supported: {', '.join(MIGRATABLE_VERSIONS)}")
    if version in ("0.3", "0.4-dev1"):
        _migrate_v03_to_v04(conn)
    # The reference rewrites every 'version' row, whatever its scope.
    md = T["ducklake_metadata"]
    conn.execute(md.update().where(md.c.key == "version").values(value=SPEC_VERSION))


def _migrate_v03_to_v04(conn: sa.Connection) -> None:
    for name in _NEW_TABLES_V04:
        T[name].create(conn, checkfirst=True)
    # The reference's SQLite scanner drops column defaults; DuckDB and PostgreSQL keep them.
    keeps_defaults = dialect_for(conn).keeps_column_defaults
    _add_column(conn, "ducklake_column", "default_value_type", "'literal'" if keeps_defaults else None)
    col = T["ducklake_column"]
    conn.execute(col.update().where(col.c.default_value_type.is_(None)).values(default_value_type="literal"))
    _add_column(conn, "ducklake_column", "default_value_dialect", "NULL" if keeps_defaults else None)
    _add_column(conn, "ducklake_schema_versions", "table_id")
    _add_column(conn, "ducklake_data_file", "partial_max")
    _add_column(conn, "ducklake_delete_file", "partial_max")
    _convert_partial_file_info(conn)
    _per_table_schema_versions(conn)


def _columns(conn: sa.Connection, table: str) -> set[str]:
    # An empty SELECT names the columns on every dialect (duckdb_engine cannot reflect them).
    query: sa.Select[Any] = sa.select(sa.literal_column("*")).select_from(sa.table(table)).where(sa.false())
    return set(conn.execute(query).keys())


def _add_column(conn: sa.Connection, table: str, column: str, default_sql: str | None = None) -> None:
    if column in _columns(conn, table):
        return
    quote = conn.dialect.identifier_preparer.quote
    type_sql = T[table].c[column].type.compile(dialect=conn.dialect)
    default = f" DEFAULT {default_sql}" if default_sql is not None else ""
    conn.exec_driver_sql(f"ALTER TABLE {quote(table)} ADD COLUMN {quote(column)} {type_sql}{default}")


def _partial_max(info: str) -> int | None:
    match = _PARTIAL_MAX.search(info)
    if match is None:
        return None
    value = int(match.group(1))
    return value if value <= _BIGINT_MAX else None  # the reference's TRY_CAST yields NULL on overflow


def _convert_partial_file_info(conn: sa.Connection) -> None:
    if "partial_file_info" not in _columns(conn, "ducklake_data_file"):
        return
    old = sa.table("ducklake_data_file", sa.column("data_file_id"), sa.column("partial_file_info", sa.String))
    # Catalog rows, not table data: a handful of merged/flushed files at most.
    rows = conn.execute(
        sa.select(old.c.data_file_id, old.c.partial_file_info).where(old.c.partial_file_info.is_not(None))
    ).all()
    updates = [{"file_id": file_id, "pmax": _partial_max(info)} for file_id, info in rows if "partial_max:" in info]
    quote = conn.dialect.identifier_preparer.quote
    conn.exec_driver_sql(f"ALTER TABLE {quote('ducklake_data_file')} DROP COLUMN {quote('partial_file_info')}")
    updates = [u for u in updates if u["pmax"] is not None]
    data_file = T["ducklake_data_file"]
    if updates:
        conn.execute(
            data_file.update().where(data_file.c.data_file_id == sa.bindparam("file_id"))
            .values(partial_max=sa.bindparam("pmax")),
            updates,
        )


def _per_table_schema_versions(conn: sa.Connection) -> None:
    # Each global (begin_snapshot, schema_version) row becomes one row per table alive then; like the
    # reference, a table row ending exactly at that snapshot counts too (renames yield two matching rows).
    sv = T["ducklake_schema_versions"]
    tbl = T["ducklake_table"]
    source = (
        sa.select(tbl.c.table_id, sv.c.begin_snapshot, sv.c.schema_version)
        .select_from(sv.join(tbl, sv.c.begin_snapshot.between(
            tbl.c.begin_snapshot, sa.func.coalesce(tbl.c.end_snapshot, sv.c.begin_snapshot))))
        .where(sv.c.table_id.is_(None))
    )
    conn.execute(sv.insert().from_select(["table_id", "begin_snapshot", "schema_version"], source))
    conn.execute(sv.delete().where(sv.c.table_id.is_(None)))


def migrate_if_needed(conn: sa.Connection, metadata: dict[str, str], *, read_only: bool = False,
                      target: str | None = None) -> dict[str, str]:
    """Migrate an older catalog at attach time to `target` (the requested ducklake_version; None: the latest, 1.1,
    as the reference migrates without a pinned version); returns the global metadata as it is afterwards."""
    version = metadata.get("version")
    target = target or LATEST
    to_v11 = is_v11(target) and (version == V10 or is_migratable(version))
    if not is_migratable(version) and not to_v11:
        return metadata  # the version checks that follow explain anything it cannot read
    if read_only:
        raise CatalogError(f"catalog is DuckLake spec {version}: migrating it to {target} needs a writable "
                           "attach (read_only=False)")
    if is_migratable(version):
        migrate(conn, version)  # type: ignore[arg-type]  # a migratable version is a string
    if to_v11:
        migrate_to_v11(conn, target)
    return {**metadata, "version": target if to_v11 else SPEC_VERSION}


def migrate_to_v11(conn: sa.Connection, target: str) -> None:
    """Upgrade a 1.0 catalog to `target` ('1.1' or '1.1-dev1') inside the caller's transaction."""
    _rename_inlined_system_columns(conn)
    for table, columns in added_columns(layout_of(target)).items():
        for column in columns:
            _add_column(conn, table, column)
    LAYOUTS[layout_of(target)].tables["ducklake_view_column_tag"].create(conn, checkfirst=True)
    if not target.endswith("-dev1"):  # the released 1.1 repairs old defects; the development build did not
        repair_for_v11(conn)
    md = T["ducklake_metadata"]
    conn.execute(md.update().where(md.c.key == "version").values(value=target))
    remember_version(conn, target)


_OLD_SYSTEM = ["row_id", "begin_snapshot", "end_snapshot"]
_NEW_SYSTEM = ["_ducklake_row_id", "_ducklake_begin_snapshot", "_ducklake_end_snapshot"]


def _rename_inlined_system_columns(conn: sa.Connection) -> None:
    registry = T["ducklake_inlined_data_tables"]
    quote = conn.dialect.identifier_preparer.quote
    for name in conn.execute(sa.select(registry.c.table_name).distinct()).scalars():
        if not sa.inspect(conn).has_table(name):
            continue
        query: sa.Select[Any] = sa.select(sa.literal_column("*")).select_from(sa.table(name)).where(sa.false())
        columns = list(conn.execute(query).keys())
        if columns[:3] == _NEW_SYSTEM:
            continue
        if columns[:3] != _OLD_SYSTEM:
            raise CatalogError(f"cannot migrate inlined data table {name} to DuckLake 1.1: unexpected column "
                               f"layout {columns[:3]}")
        taken = sorted(set(_NEW_SYSTEM) & set(columns[3:]))
        if taken:
            raise CatalogError(f"cannot migrate inlined data table {name} to DuckLake 1.1: a column is named "
                               f"{', '.join(taken)}; rename it and flush the inlined data (flush_inlined_data) first")
        for old, new in zip(_OLD_SYSTEM, _NEW_SYSTEM, strict=True):
            conn.exec_driver_sql(f"ALTER TABLE {quote(name)} RENAME COLUMN {quote(old)} TO {quote(new)}")
