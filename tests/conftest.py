"""Shared fixtures: one Spark session per test run, fresh catalogs on every backend."""

from __future__ import annotations

import itertools
import os
import re
import uuid

import pytest

from spark_ducklake.catalog_service import CATALOG_JAR
from tests.support.plugin_session import PluginSession

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# New catalogs are 1.1 by default, as DuckDB 2.0 creates them; the suite's interop oracle is DuckDB 1.5.5 from PyPI,
# which opens 1.0 catalogs only, so lakes made here are 1.0 unless a test asks for another version (the reference's
# ducklake_default_version setting, inherited by every process a test starts). Tests of the 1.1 format and of the
# default itself are marked `latest_default` and run without it.
DEFAULT_VERSION_ENV = "SPARK_DUCKLAKE_DEFAULT_VERSION"
os.environ.setdefault(DEFAULT_VERSION_ENV, "1.0")
PG_DSN = os.environ.get("SPARK_DUCKLAKE_TEST_PG", "host=127.0.0.1 port=5432 user=postgres dbname=test")
# MariaDB/MySQL server for `mysql:` catalogs, in the reference's key=value form (no db: each test makes its own).
MYSQL_DSN = os.environ.get("SPARK_DUCKLAKE_TEST_MYSQL", "host=127.0.0.1 port=3306 user=root")


def _problem(service: str, dsn: str, probe) -> str | None:
    """Why a catalog server cannot be used here (None: it can)."""
    try:
        probe()
        return None
    except Exception as exc:  # noqa: BLE001 - any failure means "not here"
        return f"{service} not reachable at {dsn!r}: {exc}"


def _require(problem: str | None) -> None:
    """Skip on a laptop without the server; fail in CI, where it must run."""
    if problem:
        if IN_CI:
            pytest.fail(problem)
        pytest.skip(problem)


def _pg_probe() -> None:
    import psycopg

    psycopg.connect(PG_DSN, connect_timeout=3).close()


_PG_PROBLEM = _problem("PostgreSQL", PG_DSN, _pg_probe)


def require_postgres() -> None:
    """Skip on a laptop without PostgreSQL; fail in CI, where it must run."""
    _require(_PG_PROBLEM)


@pytest.fixture
def pg_catalog():
    """A catalog string for a brand-new PostgreSQL database, dropped afterwards."""
    require_postgres()
    import psycopg

    name = f"dl_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_DSN, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    base = " ".join(p for p in PG_DSN.split() if not p.startswith("dbname="))
    yield f"postgres:dbname={name} {base}"
    with psycopg.connect(PG_DSN, autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _mysql_connect():
    import pymysql

    from spark_ducklake.catalog.database.mysql_dsn import connect_args

    return pymysql.connect(**connect_args(f"{MYSQL_DSN} db=mysql"), autocommit=True, connect_timeout=3)


_MYSQL_PROBLEM = _problem("MySQL/MariaDB", MYSQL_DSN, lambda: _mysql_connect().close())


def require_mysql() -> None:
    """Skip on a laptop without MariaDB/MySQL; fail in CI, where it must run."""
    _require(_MYSQL_PROBLEM)


@pytest.fixture
def new_mysql_catalog():
    """A factory of catalog strings, each for a brand-new MySQL/MariaDB database; all dropped afterwards."""
    require_mysql()
    names = []

    def make() -> str:
        names.append(f"dl_test_{uuid.uuid4().hex[:12]}")
        with _mysql_connect() as con, con.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{names[-1]}`")
        return f"mysql:db={names[-1]} {MYSQL_DSN}"

    yield make
    with _mysql_connect() as con, con.cursor() as cur:
        for name in names:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture
def mysql_catalog(new_mysql_catalog):
    """A catalog string for a brand-new MySQL/MariaDB database, dropped afterwards."""
    return new_mysql_catalog()


# Fixtures that start Spark (a session, a Connect server): a test whose fixture closure holds one is marked `spark`.
SPARK_FIXTURES = frozenset({"spark", "connect_url", "cluster"})
# Set by scripts/test.sh's `catalog` lane; `-m "not spark ..."` alone does it too (see selects_no_spark).
NO_SPARK_ENV = "SPARK_DUCKLAKE_TEST_NO_SPARK"
# Set by scripts/test.sh: the catalog backends the lane's `catalog` cases run on (the Connect and user lanes), and
# those of the tests not marked `every_backend` (the local lane).
BACKENDS_ENV = "SPARK_DUCKLAKE_TEST_BACKENDS"
UNMARKED_BACKENDS_ENV = "SPARK_DUCKLAKE_TEST_BACKENDS_UNMARKED"


def _kept_backends(item) -> set[str | None] | None:
    """The backends a test's `catalog` cases may run on in this lane (None: all)."""
    if os.environ.get(BACKENDS_ENV):
        return {None, *os.environ[BACKENDS_ENV].split(",")}
    if os.environ.get(UNMARKED_BACKENDS_ENV) and not item.get_closest_marker("every_backend"):
        return {None, *os.environ[UNMARKED_BACKENDS_ENV].split(",")}
    return None


def _backend(item) -> str | None:
    """The catalog backend of a test's `catalog` case, or None when it has none."""
    callspec = getattr(item, "callspec", None)
    return None if callspec is None else callspec.params.get("catalog")


@pytest.hookimpl(tryfirst=True)  # before pytest's own `-m` selection, which must see the `spark` marks
def pytest_collection_modifyitems(config, items):
    """Mark `spark` every test that asks for a Spark-starting fixture. Tests marked `not_on_mysql(reason)` drop
    their `catalog[mysql]` case: the reference extension cannot do what they ask of DuckDB in a MySQL catalog
    (see the reasons); tests/catalog/test_mysql_catalog.py covers MySQL."""
    for item in items:
        if SPARK_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.spark)
    dropped = [item for item in items if _backend(item) == "mysql" and item.get_closest_marker("not_on_mysql")]
    # The Spark lanes test how data moves, which the catalog backend hardly changes (the catalog lane runs every
    # backend): their `catalog` cases run on the backends scripts/test.sh names (see _kept_backends).
    for item in items:
        kept = _kept_backends(item)
        if kept is not None and _backend(item) not in kept and item not in dropped:
            dropped.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = {id(item) for item in dropped}
        items[:] = [item for item in items if id(item) not in gone]


@pytest.fixture(params=["sqlite", "duckdb", "postgres", "mysql"])
def catalog(request, tmp_path):
    """A fresh catalog string (the part after 'ducklake:') on each backend."""
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'meta.sqlite'}"
    if request.param == "duckdb":
        return f"duckdb:{tmp_path / 'meta.ducklake'}"
    if request.param == "mysql":
        return request.getfixturevalue("mysql_catalog")
    return request.getfixturevalue("pg_catalog")


def selects_no_spark(config) -> bool:
    """Whether this run selects no Spark test: SPARK_DUCKLAKE_TEST_NO_SPARK=1, or a `-m` expression that a test
    marked `spark` never passes, whatever its other marks (e.g. "not spark and not s3"; "spark and not s3" is not)."""
    if os.environ.get(NO_SPARK_ENV) == "1":
        return True
    expression = config.getoption("markexpr", "") or ""
    if not expression:
        return False
    try:
        from _pytest.mark.expression import Expression  # pytest's own parser: private, hence the env var too
    except ImportError:
        return False
    compiled = Expression.compile(expression)
    # The names in the expression (the characters pytest's own lexer takes for a name), each tried on and off.
    others = sorted(set(re.findall(r"[\w:+\-.\[\]\\/]+", expression)) - {"and", "or", "not", "spark"})
    bits = itertools.product((False, True), repeat=len(others))
    assignments = (dict(zip(others, values, strict=True)) for values in bits)
    return not any(compiled.evaluate(lambda name, marks=marks, **_: name == "spark" or marks.get(name, False))
                   for marks in assignments)


def _no_spark(*_args, **_kwargs):
    raise RuntimeError(f"this run is Spark-free ({NO_SPARK_ENV}=1 or -m 'not spark'), yet a test started Spark: "
                       "have it request the `spark` fixture, or mark it @pytest.mark.spark")


@pytest.fixture(autouse=True)
def _default_version(request, monkeypatch):
    """Tests marked `latest_default` (the 1.1 tests) see no default-version setting: a catalog they create without
    `ducklake_version=` is 1.1, and one the 1.1 reference made attaches as it is."""
    if request.node.get_closest_marker("latest_default"):
        monkeypatch.delenv(DEFAULT_VERSION_ENV, raising=False)


@pytest.fixture(scope="session", autouse=True)
def forbid_spark_when_spark_free(request):
    """In a Spark-free run, starting a Spark session fails loudly: a test that needs Spark without saying so
    (no `spark` fixture, no `spark` mark) would otherwise slow the catalog lane down unnoticed."""
    if not selects_no_spark(request.config):
        yield
        return
    patch = pytest.MonkeyPatch()
    patch.setattr("spark_ducklake.dataplane.spark.session.get_or_create_spark", _no_spark)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        SparkSession = None
    if SparkSession is not None:
        patch.setattr(SparkSession.Builder, "getOrCreate", _no_spark)
        patch.setattr(SparkSession.Builder, "create", _no_spark)
    # A child process (tests that run a script) finds no spark-submit here, so its Spark cannot start either.
    patch.setenv("SPARK_HOME", "/nonexistent/spark-free-run--mark-the-test-spark")
    yield
    patch.undo()


@pytest.fixture
def lake_catalog(request, tmp_path) -> str:
    """The catalog string of the `lake` fixture: the catalog fixture the test asks for (`catalog`, one case per
    backend; `pg_catalog`; `mysql_catalog`), else an embedded SQLite file in tmp_path."""
    for name in ("catalog", "pg_catalog", "mysql_catalog"):
        if name in request.fixturenames:
            return request.getfixturevalue(name)
    return f"sqlite:{tmp_path / 'meta.sqlite'}"


@pytest.fixture
def lake(request, lake_catalog, tmp_path):
    """A fresh lake on `lake_catalog` with its data in tmp_path/data, closed afterwards; it moves data on the
    `spark` session when the test asks for that. `@pytest.mark.lake(**options)` adds DuckLake.attach keywords,
    e.g. `@pytest.mark.lake(data_inlining_row_limit=0)` for a lake that writes Parquet however small."""
    from spark_ducklake import DuckLake

    marker = request.node.get_closest_marker("lake")
    options = dict(marker.kwargs) if marker else {}
    if "spark" in request.fixturenames:
        options.setdefault("spark", request.getfixturevalue("spark"))
    handle = DuckLake.attach(lake_catalog, str(tmp_path / "data"), **options)
    yield handle
    handle.close()


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory):
    """A Spark Connect server's URL: SPARK_REMOTE when set, else a local server started for this run."""
    if os.environ.get("SPARK_REMOTE"):
        yield os.environ["SPARK_REMOTE"]
        return
    from tests.support.connect import connect_server

    with connect_server(tmp_path_factory.mktemp("connect")) as url:
        yield url


@pytest.fixture(scope="session")
def spark(request):
    """One Spark session for the whole run: local (start-up ~6 s), or Spark Connect when
    SPARK_DUCKLAKE_TEST_CONNECT=1 (every test then moves its data through a Spark Connect server)."""
    from spark_ducklake.dataplane.spark.session import get_or_create_spark

    if os.environ.get("SPARK_DUCKLAKE_TEST_SESSION") == "user":  # --- a session built like a user's ---
        session = user_session()
        yield session
        session.stop()
        return
    if os.environ.get("SPARK_DUCKLAKE_TEST_CONNECT") == "1":
        os.environ["SPARK_REMOTE"] = request.getfixturevalue("connect_url")
    # --- object storage (tests/deployment/test_s3.py): s3a jars and settings for the local S3 server ---
    if os.environ.get("SPARK_DUCKLAKE_TEST_S3") == "1" and os.environ.get("SPARK_DUCKLAKE_S3_JARS"):
        from tests.support import s3

        s3.env_defaults()
        os.environ.setdefault("PYSPARK_SUBMIT_ARGS", s3.submit_args())
    # --- end object storage ---
    session = get_or_create_spark()
    yield session
    session.stop()


# What a user's session may look like: every conf we rely on set the other way, a non-UTC time zone whose offset
# is not whole hours, and (not set here) Spark's default 200 shuffle partitions.
HOSTILE_CONF = {
    "spark.sql.parquet.fieldId.read.enabled": "false",
    "spark.sql.parquet.fieldId.write.enabled": "false",
    "spark.sql.parquet.fieldId.read.ignoreMissing": "false",
    "spark.sql.parquet.outputTimestampType": "INT96",
    "spark.sql.session.timeZone": "Asia/Kathmandu",
}
WORKER_VENV = os.environ.get("SPARK_DUCKLAKE_WORKER_VENV", os.path.join(
    os.environ.get("SPARK_DUCKLAKE_CLUSTER_DIR", os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                              "spark-ducklake-cluster")), "worker-venv"))


def user_session():
    """A session built the way a user would (not by spark_ducklake), with HOSTILE_CONF, and Python workers from
    the cluster's worker venv (pyarrow, pandas, numpy; no spark_ducklake): PYSPARK_PYTHON unset, that venv first
    on PATH. `scripts/cluster.sh start` makes the venv (or set SPARK_DUCKLAKE_WORKER_VENV)."""
    from pyspark.sql import SparkSession

    bin_dir = os.path.join(WORKER_VENV, "bin")
    _require(None if os.path.exists(os.path.join(bin_dir, "python3")) else
             f"no worker venv at {WORKER_VENV}: run scripts/cluster.sh start")
    os.environ.pop("PYSPARK_PYTHON", None)
    os.environ.pop("SPARK_REMOTE", None)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ["PATH"]
    builder = (SparkSession.builder.master("local[2]").appName("a user's session")
               .config("spark.ui.enabled", "false")
               .config("spark.driver.memory", os.environ.get("SPARK_DUCKLAKE_DRIVER_MEMORY", "2g")))
    for key, value in HOSTILE_CONF.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


@pytest.fixture(scope="session")
def plugin_session(tmp_path_factory):
    """The catalog plugin's tests' one child process with a classic Spark session (tests/support/plugin_session.py),
    started by the first test that runs a script in it and ended after the run. Needs the plugin's jar."""
    if not CATALOG_JAR.is_file():
        assert not IN_CI, "CI builds the catalog plugin's jar (scripts/build_jar.sh)"
        pytest.skip("the catalog plugin's jar is not built (scripts/build_jar.sh needs a JDK)")
    session = PluginSession(tmp_path_factory.mktemp("plugin-session") / "spark.log")
    yield session
    session.close()


@pytest.fixture
def reference():
    """A DuckDB connection with the reference ducklake extension loaded."""
    from tests.support.reference import connect

    con = connect()
    yield con
    con.close()
