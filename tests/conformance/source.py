"""The reference's test files for a pinned commit, fetched once into a cache directory (never vendored here)."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import urllib.request
from pathlib import Path

# duckdb/ducklake at the DuckLake 1.0 release line this project implements (MIT licence, fetched at run time).
PINNED_COMMIT = "2ed0a0be8931f23959b2fc9fc089bb5f71207817"
DEFAULT_MIRROR = "/work/.mirror/duckdb+ducklake/repo"
CODELOAD = "https://codeload.github.com/duckdb/ducklake/tar.gz/{commit}"


class SourceError(RuntimeError):
    """The test files could be got neither from a local mirror nor from GitHub."""


def cache_root() -> Path:
    """`~/.cache/spark-ducklake/ducklake-tests` (XDG_CACHE_HOME respected)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "spark-ducklake" / "ducklake-tests"


def test_files(commit: str = PINNED_COMMIT, mirror: str | None = None) -> Path:
    """The directory holding `test/sql/` of `commit`, filled on first use."""
    target = cache_root() / commit
    done = target / ".complete"
    if done.exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    mirror = mirror or os.environ.get("DUCKLAKE_TESTS_MIRROR") or DEFAULT_MIRROR
    problems = []
    if Path(mirror).exists():
        try:
            _from_mirror(mirror, commit, target)
            done.write_text(commit)
            return target
        except (subprocess.CalledProcessError, OSError, tarfile.TarError) as exc:
            problems.append(f"git mirror {mirror}: {exc}")
    else:
        problems.append(f"no git mirror at {mirror} (set DUCKLAKE_TESTS_MIRROR)")
    try:
        _from_github(commit, target)
        done.write_text(commit)
        return target
    except OSError as exc:
        problems.append(f"{CODELOAD.format(commit=commit)}: {exc}")
    raise SourceError(f"cannot get the ducklake test files of commit {commit}: " + "; ".join(problems))


def _from_mirror(mirror: str, commit: str, target: Path) -> None:
    archive = subprocess.run(["git", "--git-dir", mirror, "archive", "--format=tar", commit, "test/sql", "LICENSE"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")


def _from_github(commit: str, target: Path) -> None:
    with urllib.request.urlopen(CODELOAD.format(commit=commit), timeout=60) as response:  # noqa: S310 - fixed https
        data = response.read()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = []
        for member in tar.getmembers():
            parts = member.name.split("/", 1)  # codeload prefixes every path with "ducklake-<commit>/"
            if len(parts) == 2 and (parts[1].startswith("test/sql/") or parts[1] == "LICENSE"):
                member.name = parts[1]
                members.append(member)
        tar.extractall(target, members=members, filter="data")
