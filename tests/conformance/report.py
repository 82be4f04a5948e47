"""Counts per directory, failure reasons grouped, and the JSON / markdown written from them."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

from .execute import FileResult


@dataclass
class DirectoryCounts:
    """One directory's totals. `passed` counts expected errors raised with another message too (`message`)."""

    files: int = 0
    files_out: int = 0
    statements: int = 0
    skipped: Counter = field(default_factory=Counter)
    in_scope: int = 0
    passed: int = 0
    message: int = 0
    failed: int = 0

    @property
    def percent(self) -> float:
        """Passed share of the in-scope statements."""
        return 100.0 * self.passed / self.in_scope if self.in_scope else 0.0


def directory_of(path: str) -> str:
    """`test/sql/alter/x.test` -> `alter` (files directly in test/sql: `(top)`)."""
    parts = path.split("test/sql/", 1)[-1].split("/")
    return parts[0] if len(parts) > 1 else "(top)"


def count(results: list[FileResult]) -> dict[str, DirectoryCounts]:
    """Totals per directory, plus a `TOTAL` row."""
    out: dict[str, DirectoryCounts] = {}
    for result in results:
        for key in (directory_of(result.path), "TOTAL"):
            counts = out.setdefault(key, DirectoryCounts())
            counts.files += 1
            counts.files_out += result.reason is not None
            counts.statements += len(result.outcomes)
            for outcome in result.outcomes:
                if outcome.status == "skip":
                    counts.skipped[outcome.reason] += 1
                else:
                    counts.in_scope += 1
                    counts.passed += outcome.status in ("pass", "message")
                    counts.message += outcome.status == "message"
                    counts.failed += outcome.status == "fail"
    total = out.pop("TOTAL", DirectoryCounts())
    return {**dict(sorted(out.items())), "TOTAL": total}


def failure_reasons(results: list[FileResult], top: int = 20) -> list[tuple[str, int, str]]:
    """(reason with names and numbers blanked, count, one example file:line), most frequent first."""
    groups: Counter = Counter()
    example: dict[str, str] = {}
    for result in results:
        for outcome in result.outcomes:
            if outcome.status == "fail":
                key = _generic(outcome.reason)
                groups[key] += 1
                example.setdefault(key, f"{result.path.split('test/sql/', 1)[-1]}:{outcome.line}")
    return [(k, n, example[k]) for k, n in groups.most_common(top)]


def _generic(reason: str) -> str:
    reason = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", reason)
    reason = re.sub(r"\b\d+(\.\d+)?\b", "N", reason)
    return reason[:140]


def to_json(results: list[FileResult], meta: dict) -> dict:
    """Everything: meta (commit, catalog, seconds), per-directory counts, each file's outcomes."""
    counts = count(results)
    return {
        **meta,
        "directories": {k: {**{f: getattr(v, f) for f in ("files", "files_out", "statements", "in_scope", "passed",
                                                            "message", "failed")},
                            "percent": round(v.percent, 1), "skipped": dict(v.skipped.most_common())}
                        for k, v in counts.items()},
        "failure_reasons": [{"reason": r, "count": n, "example": e} for r, n, e in failure_reasons(results, 50)],
        "files": [{**{k: v for k, v in asdict(r).items() if k != "outcomes"}, "seconds": round(r.seconds, 2),
                   "outcomes": [{**asdict(o), "sql": o.sql[:300] if o.status in ("fail", "message") else ""}
                                for o in r.outcomes]} for r in results],
    }


def to_markdown(data: dict, title: str) -> str:
    """A summary page: the per-directory table, skip reasons, top failure reasons."""
    lines = [f"## {title}", "",
             f"Commit {data.get('commit', '?')[:12]} of duckdb/ducklake, catalog `{data.get('catalog')}`, "
             f"{data.get('seconds', 0):.0f} s.", "",
             "| directory | files (out) | statements | skipped | in scope | passed | of which other message | "
             "failed | % |", "|---|---|---|---|---|---|---|---|---|"]
    skipped: Counter = Counter()
    for name, row in data["directories"].items():
        skip = sum(row["skipped"].values())
        if name != "TOTAL":
            skipped.update(row["skipped"])
        bold = "**" if name == "TOTAL" else ""
        lines.append(f"| {bold}{name}{bold} | {row['files']} ({row['files_out']}) | {row['statements']} | {skip} | "
                     f"{row['in_scope']} | {row['passed']} | {row['message']} | {row['failed']} | "
                     f"{bold}{row['percent']:.1f}{bold} |")
    lines += ["", "Skipped statements by reason:", ""]
    lines += [f"- {reason}: {n}" for reason, n in skipped.most_common()]
    lines += ["", "Top failure reasons (names and numbers blanked):", ""]
    lines += [f"- {r['count']} x {r['reason']} (e.g. {r['example']})" for r in data["failure_reasons"][:25]]
    return "\n".join(lines) + "\n"
