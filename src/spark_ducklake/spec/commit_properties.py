"""`CommitProperties`: what a snapshot records of its commit (author, message, extra info)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import InvalidArgumentError

COMMIT_KEYWORDS = ("commit_message", "author", "extra_info")


@dataclass(frozen=True)
class CommitProperties:
    """The `ducklake_snapshot_changes` columns a commit fills in (delta-rs names its equivalent the same)."""

    author: str | None = None
    commit_message: str | None = None
    extra_info: str | None = None

    def __post_init__(self) -> None:
        for name in COMMIT_KEYWORDS:  # stored as text: another type would come back as its str()
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidArgumentError(f"{name} must be a string, got {type(value).__name__} {value!r}"[:300])

    def with_default_author(self, author: str | None) -> CommitProperties:
        """These properties, the attach-time author filling in a missing one."""
        return self if self.author or not author else replace(self, author=author)


def resolve_commit_properties(given: CommitProperties | None = None, keywords: dict[str, Any] | None = None
                      ) -> CommitProperties:
    """One CommitProperties from an object and/or the keyword short forms (commit_message=, author=, extra_info=)."""
    keywords = {k: v for k, v in (keywords or {}).items() if v is not None}
    unknown = sorted(set(keywords) - set(COMMIT_KEYWORDS))
    if unknown:
        raise InvalidArgumentError(f"unknown keyword argument(s) {', '.join(unknown)}; the commit keywords are "
                                   f"{', '.join(COMMIT_KEYWORDS)}")
    if given is not None and not isinstance(given, CommitProperties):
        raise InvalidArgumentError(f"commit_properties must be a CommitProperties, got {type(given).__name__}")
    return replace(given or CommitProperties(), **keywords)
