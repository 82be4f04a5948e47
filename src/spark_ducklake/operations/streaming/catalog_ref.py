"""Catalog attach strings handed to Spark's Python processes by reference, so no password is in an option or a plan.

Spark shows a data source's options and a Connect plan's text (pickled functions included) unredacted: a Spark
Connect server writes them into its event log (`statementText`) and UI, py4j logs them at DEBUG. An attach string
whose password the catalog's dialect finds is therefore written to a file only this user can read (0600, in a
0700 folder under the temp dir, named by a random token; removed when this process exits) and Spark is handed the
file's path as the option `catalog_file`. The processes that read the catalog (where Spark plans the source: the
driver's Python workers, or the Connect server's; the sink's foreachBatch) read the file; executors only read
data files and get no catalog at all. `catalog_env` names an environment variable holding the attach string
instead, for a Connect server on another machine. Strings without a password (file catalogs, servers that
authenticate otherwise) travel as the option `catalog` itself.
"""

from __future__ import annotations

import atexit
import os
import secrets
import tempfile
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ...catalog.database.connection import parse_catalog

FILE_OPTION, ENV_OPTION, PLAIN_OPTIONS = "catalog_file", "catalog_env", ("catalog_url", "catalog")
_lock = threading.Lock()
_files: dict[str, str] = {}  # attach string -> the file this process wrote it to


def holds_password(attach: str) -> bool:
    """Whether an attach string carries a password (its dialect finds one)."""
    location = parse_catalog(attach)
    return bool(location.dialect.server and location.dialect.password(location.connection_string()))


def stash(attach: str) -> str:
    """The path of a file only this user can read holding `attach` (one file per string and process)."""
    with _lock:
        path = _files.get(attach)
        if path is not None and os.path.exists(path):
            return path
        folder = Path(tempfile.gettempdir()) / f"spark-ducklake-secrets-{os.getuid()}"
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)  # an existing folder made with another umask
        path = str(folder / secrets.token_hex(16))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(attach)
        if not _files:
            atexit.register(_remove_files)
        _files[attach] = path
        return path


def _remove_files() -> None:
    for path in list(_files.values()):
        try:
            os.remove(path)
        except OSError:
            pass
    _files.clear()


def catalog_options(attach: str) -> dict[str, str]:
    """The options carrying `attach` to Spark's Python processes: a file reference when it holds a password."""
    return {FILE_OPTION: stash(attach)} if holds_password(attach) else {"catalog": attach}


@dataclass(frozen=True)
class CatalogRef:
    """Where a process finds the attach string: a file, an environment variable, or the string itself (only one
    without a password). Safe to pickle and show: it holds no secret."""

    file: str | None = None
    env: str | None = None
    plain: str | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> CatalogRef | None:
        """From a source's options (`catalog_file`, `catalog_env`, `catalog_url` / `catalog`); None without any.
        A password given in `catalog_url` / `catalog` is accepted with a warning and stashed in this process."""
        if options.get(FILE_OPTION):
            return cls(file=options[FILE_OPTION])
        if options.get(ENV_OPTION):
            return cls(env=options[ENV_OPTION])
        attach = next((options[k] for k in PLAIN_OPTIONS if options.get(k)), None)
        return None if attach is None else cls.of(attach, warn=True)

    @classmethod
    def of(cls, attach: str, *, warn: bool = False) -> CatalogRef:
        """A reference to `attach`: a file of this process when it holds a password."""
        if not holds_password(attach):
            return cls(plain=attach)
        if warn:
            warnings.warn("the ducklake source was given a catalog password in an option, which Spark shows in "
                          "plans, its UI and event log: pass option 'catalog_file' (a file holding the attach "
                          "string) or 'catalog_env' (an environment variable's name) instead; see docs/streaming.md",
                          UserWarning, stacklevel=4)
        return cls(file=stash(attach))

    def resolve(self) -> str:
        """The attach string."""
        if self.plain is not None:
            return self.plain
        if self.env is not None:
            value = os.environ.get(self.env)
            if not value:
                raise ValueError(f"option {ENV_OPTION}: environment variable {self.env} is not set in this process "
                                 f"(pid {os.getpid()}): set it where Spark plans the source (docs/streaming.md)")
            return value.strip()
        try:
            return Path(self.file).read_text(encoding="utf-8").strip()  # type: ignore[arg-type]  # file or env or plain is set
        except OSError as exc:
            raise ValueError(f"option {FILE_OPTION}: cannot read {self.file} ({exc.strerror}): the file holding the "
                             "attach string must exist where Spark plans the source; over a Spark Connect server on "
                             f"another machine use option {ENV_OPTION} (docs/streaming.md)") from None

    def options(self) -> dict[str, str]:
        """This reference as the source's options."""
        if self.file is not None:
            return {FILE_OPTION: self.file}
        if self.env is not None:
            return {ENV_OPTION: self.env}
        return {"catalog": self.plain}  # type: ignore[dict-item]  # one of file, env, plain is set


def attach_string(ctx) -> str:
    """The catalog attach string of a lake, with file paths absolute (it is used in other processes)."""
    return ctx.location.attach_string()


def metadata_schema_option(ctx) -> dict[str, str]:
    """The option that carries a lake's METADATA_SCHEMA to another process (none when it has the default)."""
    schema = ctx.location.metadata_schema
    return {"metadata_schema": schema} if schema is not None else {}
