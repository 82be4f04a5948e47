"""Catalog passwords never show: not in errors (nor their chained causes or tracebacks), log records, reprs, the
lake's attributes, a stream writer's repr or the CLI's output, whatever form the attach string gives them in."""

from __future__ import annotations

import logging
import traceback
import uuid

import pytest

from spark_ducklake import DuckLake
from spark_ducklake.catalog.database.connection import parse_catalog
from spark_ducklake.cli import main
from spark_ducklake.errors import CatalogError
from tests.conftest import PG_DSN, _mysql_connect, require_mysql, require_postgres

SECRET = "Pw-" + uuid.uuid4().hex[:10]


def _pg_base() -> str:
    return " ".join(p for p in PG_DSN.split() if not p.startswith("dbname="))


def _pg_parts() -> dict[str, str]:
    return dict(p.split("=", 1) for p in _pg_base().split())


def _pg_forms(dbname: str, password: str = SECRET) -> list[str]:
    """Every way the attach string can carry a PostgreSQL password."""
    p = _pg_parts()
    host, port, user = p.get("host", "127.0.0.1"), p.get("port", "5432"), p.get("user", "postgres")
    return [
        f"postgres:dbname={dbname} host={host} port={port} user={user} password={password}",
        f"postgres:dbname={dbname} host={host} port={port} user={user} password = {password}",
        f"ducklake:postgres:password =  '{password}' dbname={dbname} host={host} port={port} user={user}",
        f"postgresql:host={host} port={port} user={user} dbname={dbname} password='{password}'",
        f"postgres:postgresql://{user}:{password}@{host}:{port}/{dbname}",
        f"ducklake:postgres:postgres://{user}@{host}:{port}/{dbname}?password={password}",
    ]


def _mysql_forms(db: str, user: str, password: str = SECRET) -> list[str]:
    """Every way the attach string can carry a MySQL password (like DuckDB's, no spaces around '=')."""
    return [
        f"mysql:db={db} host=127.0.0.1 port=3306 user={user} password={password}",
        f"ducklake:mysql:passwd={password} db={db} host=127.0.0.1 port=3306 user={user}",
        f'mysql:db={db} host=127.0.0.1 port=3306 user={user} PASSWORD="{password}"',
    ]


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _assert_error_hides(exc: BaseException, secret: str = SECRET) -> None:
    texts = ["".join(traceback.format_exception(exc))]
    for link in _chain(exc):
        texts += [str(link), repr(link), repr(link.args)]
    for text in texts:
        assert secret not in text


def _assert_logs_hide(caplog, secret: str = SECRET) -> None:
    for record in caplog.records:
        assert secret not in record.getMessage() and secret not in repr(record.args)


def _assert_lake_hides(lake: DuckLake, capsys, catalog: str, secret: str = SECRET) -> None:
    texts = [repr(lake), str(lake), repr(vars(lake)), repr(lake.location), str(lake.location),
             lake.location.describe(), repr(lake.stream_writer("t", query_id="q")), repr(lake.settings())]
    for text in texts:
        assert secret not in text
    capsys.readouterr()
    for command in ("info", "tables", "snapshots"):
        assert main([command, catalog]) == 0
    out = capsys.readouterr()
    assert "snapshots" in out.out and secret not in out.out + out.err


def test_parsed_locations_keep_the_password_only_for_connecting():
    forms = _pg_forms("x") + _mysql_forms("x", "u")
    for catalog in forms:
        location = parse_catalog(catalog)
        for text in (repr(location), str(location), location.describe(), repr(vars(location))):
            assert SECRET not in text, catalog
        assert "***" in location.describe()
        assert SECRET in location.connection_string()  # what the drivers and other processes get
        assert parse_catalog(location.attach_string()) == location


def test_malformed_strings_are_refused_without_echoing_them():
    for catalog in (f"postgres:host=h password={SECRET} {SECRET}x", f"postgres:host=h password='{SECRET}",
                    f"mysql:db=x password={SECRET} ={SECRET}", f'mysql:db=x password="{SECRET}',
                    f"mysql:db=x password = {SECRET}", f"mysql:db=x password={SECRET} {SECRET}=x"):
        with pytest.raises(CatalogError) as info:
            parse_catalog(catalog)
        _assert_error_hides(info.value)


def test_postgres_refusals_hide_the_password(caplog):
    require_postgres()
    caplog.set_level(logging.DEBUG)
    missing = f"dl_missing_{uuid.uuid4().hex[:8]}"
    for catalog in _pg_forms(missing):
        with pytest.raises(CatalogError) as info:
            DuckLake.attach(catalog, "/tmp/never-used")
        assert missing in str(info.value)  # names the cause: the database the server does not have
        _assert_error_hides(info.value)
    _assert_logs_hide(caplog)


def test_postgres_lake_and_cli_hide_the_password(pg_catalog, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    dbname = pg_catalog.split("dbname=", 1)[1].split()[0]
    _assert_lakes_hide(_pg_forms(dbname), tmp_path, capsys)  # trust auth: the server ignores the password
    _assert_logs_hide(caplog)


def _assert_lakes_hide(catalogs: list[str], tmp_path, capsys) -> None:
    """Attach each form of one catalog (the first creates a table) and check the lake and the CLI hide it."""
    for i, catalog in enumerate(catalogs):
        lake = DuckLake.attach(catalog, str(tmp_path / "data"))
        if i == 0:
            lake.create_table("t", "id INT")
        try:
            _assert_lake_hides(lake, capsys, catalog)
        finally:
            lake.close()


@pytest.fixture
def mysql_user(new_mysql_catalog):
    """(database, user) for a MySQL user whose password is SECRET, dropped afterwards."""
    require_mysql()
    db = new_mysql_catalog().split("db=", 1)[1].split()[0]
    user = f"dl_{uuid.uuid4().hex[:8]}"
    with _mysql_connect() as con, con.cursor() as cur:
        cur.execute(f"CREATE USER '{user}'@'%%' IDENTIFIED BY %s", (SECRET,))
        cur.execute(f"CREATE USER '{user}'@'localhost' IDENTIFIED BY %s", (SECRET,))
        for host in ("%", "localhost"):
            cur.execute(f"GRANT ALL ON `{db}`.* TO '{user}'@'{host}'")
    yield db, user
    with _mysql_connect() as con, con.cursor() as cur:
        for host in ("%", "localhost"):
            cur.execute(f"DROP USER IF EXISTS '{user}'@'{host}'")


def test_mysql_refusals_hide_the_password(mysql_user, caplog):
    caplog.set_level(logging.DEBUG)
    db, user = mysql_user
    for catalog in _mysql_forms(db, user, SECRET + "-wrong") + _mysql_forms(f"{db}_missing", user):
        with pytest.raises(CatalogError) as info:
            DuckLake.attach(catalog, "/tmp/never-used")
        assert "denied" in str(info.value).lower()
        _assert_error_hides(info.value)
        _assert_error_hides(info.value, SECRET + "-wrong")
    _assert_logs_hide(caplog)


def test_mysql_lake_and_cli_hide_the_password(mysql_user, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    db, user = mysql_user
    _assert_lakes_hide(_mysql_forms(db, user), tmp_path, capsys)
    _assert_logs_hide(caplog)

