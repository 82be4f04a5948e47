"""Opening a lake with DuckDB's reference `ducklake` extension, offline (installed from PyPI packages)."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import site
import sys
import tempfile

EXTENSIONS = ("ducklake", "sqlite_scanner", "postgres_scanner", "mysql_scanner", "icu", "json")


def _extension_dir() -> str:
    import duckdb

    version = duckdb.__version__
    # One folder per environment: links into another (since deleted) environment would dangle.
    env = hashlib.sha256(sys.prefix.encode("utf-8")).hexdigest()[:12]
    root = os.path.join(tempfile.gettempdir(), f"spark-ducklake-ext-{os.getuid()}-{env}")
    target = os.path.join(root, f"v{version}", "linux_amd64")
    os.makedirs(target, exist_ok=True)
    roots = site.getsitepackages() + [site.getusersitepackages()]
    for sp in roots:
        pattern = f"{sp}/duckdb_extension_*/extensions/v{version}/*.duckdb_extension"
        for src in glob.glob(pattern):
            dst = os.path.join(target, os.path.basename(src))
            if os.path.exists(dst):
                continue
            # Processes side by side (test lanes) link the same files: build aside, then rename over (atomic).
            aside = f"{dst}.{os.getpid()}"
            with contextlib.suppress(FileNotFoundError):
                os.remove(aside)
            os.symlink(src, aside)
            os.replace(aside, dst)
    return root


def connect(database: str = ":memory:"):
    """A DuckDB connection with ducklake and the catalog scanners loaded."""
    import duckdb

    con = duckdb.connect(
        database,
        config={
            "extension_directory": _extension_dir(),
            "allow_unsigned_extensions": "true",
            "autoinstall_known_extensions": "false",
        },
    )
    for ext in EXTENSIONS:
        con.execute(f"LOAD {ext}")
    return con


def attach(con, catalog: str, data_path: str | None = None, alias: str = "lake", **options) -> None:
    """ATTACH a DuckLake in the reference; `catalog` is what follows 'ducklake:'."""
    opts = []
    if data_path is not None:
        opts.append(f"DATA_PATH '{data_path}'")
    for key, value in options.items():
        opts.append(f"{key.upper()} {value!r}" if isinstance(value, str) else f"{key.upper()} {value}")
    suffix = f" ({', '.join(opts)})" if opts else ""
    con.execute(f"ATTACH 'ducklake:{catalog}' AS {alias}{suffix}")
