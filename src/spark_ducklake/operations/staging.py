"""`Staged`: what every `stage_*` function returns, whatever the operation (write, delete, update, merge, flush)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

R = TypeVar("R")


@dataclass(frozen=True)
class Staged(Generic[R]):
    """An operation staged, nothing committed: the catalog operations to commit, the files they wrote (to delete
    if the commit does not happen), and what the operation reports (rows changed, a MERGE's counts, a flush's rows;
    None for a write)."""

    ops: list[Any]
    files: list[str]
    result: R
