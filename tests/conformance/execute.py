"""One test file run: ATTACH / DETACH / USE by the runner on `DuckLake` handles over the chosen catalog database,
every other in-scope statement through `lake.sql(text, dialect="duckdb", catalog_name=<attached name>)`."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .attach import AttachError, AttachSpec, parse_attach, parse_detach, parse_use
from .parser import Directive, Record, TestFile, substitute
from .render import compare, render_value
from .scope import ScopeState, file_reason, record_reason, statement_reason

PG_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=test"
# The version of the catalogs a run creates (--ducklake-version): what the pinned test files expect when an ATTACH
# names none, the reference's DUCKLAKE_LATEST_VERSION at that commit (the offline 1.1 binary writes it too).
DEFAULT_DUCKLAKE_VERSION = "1.1-dev1"
DUCKLAKE_VERSIONS = ("1.0", "1.1", "1.1-dev1")
_DEFAULT_VERSION_SETTING = re.compile(r"^(?P<word>SET|RESET)\s+(?:(?:GLOBAL|SESSION|LOCAL)\s+)?"
                                      r"ducklake_default_version\b(?:\s*(?:=|\bTO\b)\s*(?P<value>.+?))?\s*;?\s*$",
                                      re.IGNORECASE | re.DOTALL)
METADATA_DATABASE = "DETACH / USE of the metadata database (DuckDB's attached catalog database)"


class _OutOfScope(Exception):
    """A runner-handled statement that turns out to be out of scope (its reason is the message)."""


@dataclass
class Outcome:
    """One record's result: pass, message (an expected error raised with another message), fail or skip."""

    line: int
    kind: str
    status: str
    reason: str = ""
    sql: str = ""
    seconds: float = 0.0


@dataclass
class FileResult:
    """A file's outcomes; `reason` set when the whole file is out of scope."""

    path: str
    reason: str | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    features: list[str] = field(default_factory=list)  # the DuckLake 1.1 features it tests (report.v11_features)


class Catalogs:
    """Maps the metadata locations a test attaches to catalog strings of the chosen backend; drops what it made."""

    def __init__(self, kind: str, pg_dsn: str = PG_DSN):
        if kind not in ("sqlite", "duckdb", "postgres"):
            raise ValueError(f"catalog must be sqlite, duckdb or postgres; got {kind!r}")
        self.kind, self.pg_dsn, self.made = kind, pg_dsn, []

    def catalog_string(self, location: str) -> str:
        """The DuckLake.attach catalog for a test's metadata location (`x.db`, `sqlite:x`, `duckdb:x`)."""
        prefix, _, rest = location.partition(":")
        path = rest if prefix in ("sqlite", "duckdb") else location
        if prefix in ("postgres", "mysql"):
            raise AttachError(f"ATTACH of a {prefix} server named in the test (the runner chooses the catalog)")
        if self.kind == "sqlite":
            return f"sqlite:{path}"
        if self.kind == "duckdb":
            return f"duckdb:{path}"
        import psycopg

        name = "dlc_" + hashlib.md5(path.encode()).hexdigest()[:20]  # noqa: S324 - a name, not security
        if name not in self.made:
            with psycopg.connect(self.pg_dsn, autocommit=True) as con:
                con.execute(f'CREATE DATABASE "{name}"')
            self.made.append(name)
        base = " ".join(p for p in self.pg_dsn.split() if not p.startswith("dbname="))
        return f"postgres:dbname={name} {base}"

    def drop(self) -> None:
        """Drop the PostgreSQL databases made for one file."""
        if not self.made:
            return
        import psycopg

        with psycopg.connect(self.pg_dsn, autocommit=True) as con:
            for name in self.made:
                con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.made = []


class FileRunner:
    """Runs test files on one Spark session and one catalog backend."""

    def __init__(self, spark, catalog: str = "sqlite", spark_functions: frozenset[str] | None = None,
                 slow: bool = False, ducklake_version: str = DEFAULT_DUCKLAKE_VERSION):
        if ducklake_version not in DUCKLAKE_VERSIONS:
            raise ValueError(f"ducklake_version must be one of {', '.join(DUCKLAKE_VERSIONS)}; "
                             f"got {ducklake_version!r}")
        self.spark, self.slow, self.ducklake_version = spark, slow, ducklake_version
        self.catalogs = Catalogs(catalog)
        if spark_functions is None:
            spark_functions = frozenset(r[0].lower() for r in spark.sql("SHOW FUNCTIONS").collect())
        self.spark_functions = spark_functions

    def run(self, test: TestFile) -> FileResult:
        """Run one parsed file in a fresh directory; every lake is closed and every catalog dropped after."""
        started = time.monotonic()
        result = FileResult(test.path, file_reason(test, self.slow, self.ducklake_version))
        if result.reason is not None:
            result.outcomes = [Outcome(r.line, r.kind, "skip", result.reason) for r in test.records]
        else:
            workdir = Path(tempfile.mkdtemp(prefix="ducklake-conformance-"))
            run, cwd = _Run(self, test, workdir), os.getcwd()
            os.chdir(workdir)  # relative paths in a test (ATTACH 'ducklake:my_lake') land in its directory
            try:
                result.outcomes = run.execute()
            finally:
                os.chdir(cwd)
                run.close()
                self.catalogs.drop()
                shutil.rmtree(workdir, ignore_errors=True)
        result.seconds = time.monotonic() - started
        return result


class _Run:
    """One file's run: its attached lakes, scope state, result labels and substitution variables."""

    def __init__(self, runner: FileRunner, test: TestFile, workdir: Path):
        self.runner, self.test, self.workdir = runner, test, workdir
        self.lakes: dict = {}
        self.state = ScopeState(spark_functions=runner.spark_functions, ducklake_version=runner.ducklake_version)
        self.default_version: str | None = None  # SET ducklake_default_version (DuckDB's setting, read by ATTACH)
        self.attached: set[str] = set()  # catalog strings attached in this file: they hold a lake now
        self.labels: dict[str, str] = {}
        stem = Path(test.path).name.split(".")[0]
        self.variables = {"TEST_DIR": str(workdir), "__TEST_DIR__": str(workdir), "BASE_TEST_NAME": stem}

    def close(self) -> None:
        for lake in self.lakes.values():
            try:
                lake.close()
            except Exception:  # noqa: BLE001, S110 - closing after a failed test must not hide the results
                pass
        self.lakes.clear()

    def _text(self, text: str) -> str:
        text = text.replace("{UUID}", uuid.uuid4().hex).replace("__TEST_DIR__", self.variables["TEST_DIR"])
        return substitute(text, self.variables)

    def execute(self) -> list[Outcome]:
        outcomes: list[Outcome] = []
        skipping, halted = False, False
        for item in self.test.items:
            if isinstance(item, Directive):
                if item.kind == "test-env" and len(item.args) >= 2:
                    self.variables[item.args[0]] = self._text(" ".join(item.args[1:]))
                elif item.kind == "mode" and item.args:
                    skipping = item.args[0] == "skip" or (skipping and item.args[0] != "unskip")
                elif item.kind == "halt":
                    halted = True
                continue
            sql = self._text(item.sql)
            if halted or skipping:
                outcomes.append(Outcome(item.line, item.kind, "skip", "halt / mode skip (the test's own)", sql))
                continue
            reason = record_reason(item)
            if reason:
                outcomes.append(Outcome(item.line, item.kind, "skip", reason, sql))
                continue
            started = time.monotonic()
            outcome = self._record(item, sql)
            outcome.seconds = round(time.monotonic() - started, 3)
            outcomes.append(outcome)
        return outcomes

    # ------------------------------------------------------------------------------------------ one record
    def _record(self, record: Record, sql: str) -> Outcome:
        word = sql.split(None, 1)[0].upper() if sql.strip() else ""
        if word in ("ATTACH", "DETACH", "USE"):
            return self._session(record, sql, word)
        setting = _DEFAULT_VERSION_SETTING.match(sql.strip())
        if setting:  # a DuckDB session setting ATTACH reads: the runner's, as ATTACH is
            value = (setting.group("value") or "").strip().strip("'\"")
            self.default_version = value if setting.group("word").upper() == "SET" else None
            return Outcome(record.line, record.kind, "pass", "", sql)
        self.state.note(sql)
        reason = statement_reason(sql, self.state)
        if reason:
            return Outcome(record.line, record.kind, "skip", reason, sql)
        target = self._target(sql)
        if target is None:
            return Outcome(record.line, record.kind, "skip", "no lake attached (a plain DuckDB statement)", sql)
        name, lake = target
        try:
            result = lake.sql(sql, dialect="duckdb", catalog_name=name)
            values, kinds, columns = _materialize(result)
        except Exception as exc:  # noqa: BLE001 - any error is the statement's outcome
            return self._errored(record, sql, exc)
        if record.kind == "statement":
            if record.expect == "error":
                return Outcome(record.line, record.kind, "fail", "no error raised (statement error expected)", sql)
            return Outcome(record.line, record.kind, "pass", "", sql)
        expected = [self._text(e) for e in record.expected]
        width = len(record.types) or columns
        if columns != width and not (len(expected) == 1 and "hashing to" in expected[0]):
            return Outcome(record.line, record.kind, "fail", f"wrong result: {columns} column(s), expected {width}",
                           sql)
        problem = compare(values, columns, kinds, expected, record.sort, self.labels, record.label)
        if problem:
            return Outcome(record.line, record.kind, "fail", f"wrong result: {problem}", sql)
        return Outcome(record.line, record.kind, "pass", "", sql)

    def _errored(self, record: Record, sql: str, exc: Exception) -> Outcome:
        message = _message(exc)
        if record.kind == "statement" and record.expect in ("error", "maybe"):
            wanted = self._text(record.error) if record.error else ""
            if record.expect == "maybe" or not wanted or _error_matches(message, wanted):
                return Outcome(record.line, record.kind, "pass", "", sql)
            return Outcome(record.line, record.kind, "message", f"error message differs: expected {wanted[:80]!r}",
                           sql)
        return Outcome(record.line, record.kind, "fail", f"{type(exc).__name__}: {message.splitlines()[0][:160]}"
                       if message else type(exc).__name__, sql)

    def _target(self, sql: str):
        """(attached name, lake) a statement runs on: the one lake it names, else the USE'd one, else the only."""
        named = [n for n in self.lakes if re.search(rf"(?<![\w.]){re.escape(n)}\s*\.|'{re.escape(n)}'", sql,
                                                      re.IGNORECASE)]
        named += [lake for meta, lake in self.state.metadata.items()  # `__ducklake_metadata_lake.ducklake_x`
                  if lake in self.lakes and lake not in named and
                  re.search(rf"(?<![\w.]){re.escape(meta)}\s*\.", sql, re.IGNORECASE)]
        if len(named) == 1:
            return named[0], self.lakes[named[0]]
        if self.state.default in self.lakes:
            return self.state.default, self.lakes[self.state.default]
        if named:
            return named[0], self.lakes[named[0]]
        if len(self.lakes) == 1:
            name = next(iter(self.lakes))
            return name, self.lakes[name]
        return None

    # ------------------------------------------------------------------------------------------ ATTACH etc.
    def _session(self, record: Record, sql: str, word: str) -> Outcome:
        try:
            if word == "ATTACH":
                skipped = self._attach(parse_attach(sql))
                if skipped:
                    return Outcome(record.line, record.kind, "skip", skipped, sql)
            elif word == "DETACH":
                self._detach(sql)
            else:
                skipped = self._use(sql)
                if skipped:
                    return Outcome(record.line, record.kind, "skip", skipped, sql)
        except _OutOfScope as exc:
            return Outcome(record.line, record.kind, "skip", str(exc), sql)
        except Exception as exc:  # noqa: BLE001 - the statement's outcome
            return self._errored(record, sql, exc)
        if record.kind == "statement" and record.expect == "error":
            return Outcome(record.line, record.kind, "fail", "no error raised (statement error expected)", sql)
        return Outcome(record.line, record.kind, "pass", "", sql)

    def _attach(self, spec: AttachSpec) -> str | None:
        from spark_ducklake import DuckLake

        if not spec.is_ducklake:
            self.state.foreign[spec.name] = "non-lake table (another attached database)"
            return "ATTACH of a non-DuckLake database"
        if spec.name in self.lakes and spec.or_replace:
            self.lakes.pop(spec.name).close()
        if spec.name in self.lakes:
            if spec.if_not_exists:
                return None
            raise AttachError(f'Binder Error: Failed to attach database: database with name "{spec.name}" '
                              "already exists")
        location = spec.location
        catalog = self.runner.catalogs.catalog_string(location)
        keywords = dict(spec.keywords)
        exists = _exists(catalog) or catalog in self.attached
        if "data_path" not in keywords and not exists:
            keywords["data_path"] = location.rsplit(":", 1)[-1] + ".files"
        if "ducklake_version" not in keywords:
            keywords["ducklake_version"] = self._version(exists, keywords.get("automatic_migration", False))
        lake = DuckLake.attach(catalog, keywords.pop("data_path", None), spark=self.runner.spark, **keywords)
        self.attached.add(catalog)
        self.lakes[spec.name] = lake
        self.state.lakes.add(spec.name)
        self.state.foreign.pop(spec.name, None)
        self.state.metadata[spec.metadata_catalog.lower()] = spec.name  # its catalog tables: read by lake.sql
        return None

    def _version(self, exists: bool, migrate: bool) -> str | None:
        """The ducklake_version of an ATTACH naming none, as the reference decides it: the session's
        ducklake_default_version when set (new and existing catalogs alike); else the run's version, which plays
        the reference's DUCKLAKE_LATEST_VERSION, for a new catalog or as the target of AUTOMATIC_MIGRATION; else
        None (an existing catalog keeps its version)."""
        if self.default_version is not None:
            return self.default_version
        return self.runner.ducklake_version if not exists or migrate else None

    def _detach(self, sql: str) -> None:
        parsed = parse_detach(sql)
        if parsed is None:
            raise AttachError(f"DETACH form not understood: {sql[:80]!r}")
        name, if_exists = parsed
        lake = next((self.lakes.pop(n) for n in list(self.lakes) if n.lower() == name.lower()), None)
        if lake is None:
            if name.lower() in self.state.metadata:
                raise _OutOfScope(METADATA_DATABASE)
            if name in self.state.foreign:
                self.state.foreign.pop(name)
                return
            if not if_exists:
                raise AttachError(f"Catalog Error: Failed to detach database with name \"{name}\": database not "
                                  "found")
            return
        self.state.lakes.discard(name)
        self.state.metadata = {k: v for k, v in self.state.metadata.items() if v.lower() != name.lower()}
        if self.state.default and self.state.default.lower() == name.lower():
            self.state.default = None
        lake.close()

    def _use(self, sql: str) -> str | None:
        parsed = parse_use(sql)
        if parsed is None:
            raise AttachError(f"USE form not understood: {sql[:80]!r}")
        name, schema = parsed
        if name.lower() == "memory":
            self.state.default = None
            return None
        lake = next((n for n in self.lakes if n.lower() == name.lower()), None)
        if lake is None:
            if name.lower() in self.state.metadata:
                raise _OutOfScope(METADATA_DATABASE)
            if name in self.state.foreign:
                self.state.default = None
                return "USE of a non-lake database"
            raise AttachError(f"Catalog Error: SET search_path: No catalog + schema named \"{name}\" found.")
        if schema is not None and schema.lower() != "main":
            return "USE catalog.schema (a default schema other than main)"
        self.state.default = lake
        return None


def _exists(catalog: str) -> bool:
    kind, _, rest = catalog.partition(":")
    return kind in ("sqlite", "duckdb") and Path(rest).exists()


def _message(exc: Exception) -> str:
    text = str(exc)
    if "\n\nJVM stacktrace" in text:
        text = text.split("\n\nJVM stacktrace", 1)[0]
    return text.strip() or type(exc).__name__


def _error_matches(message: str, wanted: str) -> bool:
    if wanted.startswith("<REGEX>:"):
        return re.search(wanted[len("<REGEX>:"):], message, re.DOTALL) is not None
    if wanted.startswith("<!REGEX>:"):
        return re.search(wanted[len("<!REGEX>:"):], message, re.DOTALL) is None
    return wanted.lower() in message.lower()


def _materialize(result) -> tuple[list[str], list[str], int]:
    """A lake.sql result's values rendered, the column kinds (numeric/boolean/other) and its column count."""
    if result is None:
        return [], [], 0
    if hasattr(result, "schema") and hasattr(result, "collect"):
        fields = result.schema.fields
        rows = result.collect()
        names = [f.dataType.simpleString() for f in fields]
        kinds = [_kind(f.dataType) for f in fields]
        return [render_value(v, names[i]) for row in rows for i, v in enumerate(row)], kinds, len(fields)
    rows = list(result)
    if rows and all(type(r).__name__ == "CommandResult" for r in rows):
        counts = [r.rows for r in rows if r.rows is not None]
        return [str(c) for c in counts], ["numeric"], 1
    if not rows:
        return [], [], 0
    width = len(rows[0])
    kinds = ["numeric" if isinstance(v, (int, float)) and not isinstance(v, bool) else
             "boolean" if isinstance(v, bool) else "other" for v in rows[0]]
    return [render_value(v) for row in rows for v in row], kinds, width


def _kind(data_type) -> str:
    from pyspark.sql import types as T

    if isinstance(data_type, T.BooleanType):
        return "boolean"
    if isinstance(data_type, T.NumericType):
        return "numeric"
    return "other"
