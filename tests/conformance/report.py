"""Counts per directory, failure reasons grouped, and the JSON / markdown written from them."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

from .execute import FileResult, Outcome


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


# The DuckLake 1.1 features a file tests, by what its text or path says (a file can test several): the new 1.1
# catalog tables, columns, transforms and migrations (/work/shared/reference/ducklake-docs-1.1, CHANGES-1.0-to-1.1).
V11_FEATURES = {
    "epoch transforms": re.compile(r"\bepoch_(?:year|month|day|hour)\s*\(", re.IGNORECASE),
    "view column tags": re.compile(r"\bducklake_view_column_tag\b|view_column_tags?\b|comment_on_view_column",
                                   re.IGNORECASE),
    "row group counts": re.compile(r"\brow_group_count\b", re.IGNORECASE),
    "inlined column renames": re.compile(r"inlined_column_rename", re.IGNORECASE),
    "deletion vectors": re.compile(r"\bwrite_deletion_vectors\b|deletion_vector", re.IGNORECASE),
    "_ducklake_row_id": re.compile(r"\b_ducklake_row_id\b", re.IGNORECASE),
    "migrations": re.compile(r"test/sql/migration/|\bAUTOMATIC_MIGRATION\b", re.IGNORECASE),
}


def v11_features(path: str, text: str) -> list[str]:
    """The V11_FEATURES a test file (its path under test/sql and its text) exercises."""
    return [name for name, rule in V11_FEATURES.items() if rule.search(path) or rule.search(text)]


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


def _percent(passed: int, in_scope: int) -> str:
    return f"{100.0 * passed / in_scope:.1f}" if in_scope else "-"


def feature_counts(data: dict) -> dict[str, dict]:
    """Per V11_FEATURES name: files, files out, in scope, passed (files without `features` count nowhere)."""
    out = {name: {"files": 0, "files_out": 0, "in_scope": 0, "passed": 0} for name in V11_FEATURES}
    for entry in data["files"]:
        for name in entry.get("features", []):
            row = out[name]
            row["files"] += 1
            row["files_out"] += entry["reason"] is not None
            ran = [o for o in entry["outcomes"] if o["status"] != "skip"]
            row["in_scope"] += len(ran)
            row["passed"] += sum(o["status"] in ("pass", "message") for o in ran)
    return out


def shared_counts(data: dict) -> dict[str, int]:
    """In scope and passed over the files that test no 1.1 feature: what both versions are measured on alike (a
    1.1 feature file asserts 1.1 behaviour, which a 1.0 catalog rightly lacks; those files are counted apart)."""
    ran = [o for e in data["files"] if not e.get("features") for o in e["outcomes"] if o["status"] != "skip"]
    return {"in_scope": len(ran), "passed": sum(o["status"] in ("pass", "message") for o in ran)}


def merge_runs(pages: list[dict]) -> list[dict]:
    """Results of one catalog and version from several runs (say a full run, then some directories again after a
    fix) as one: a file of a later run replaces the same file of an earlier one; counts recomputed."""
    groups: dict[tuple, list[dict]] = {}
    for page in pages:
        groups.setdefault((page["catalog"], page.get("ducklake_version", "1.0")), []).append(page)
    out = []
    for runs in groups.values():
        if len(runs) == 1 or not all(r["files"] for r in runs):
            out.extend(runs)
            continue
        files: dict[str, dict] = {}
        for run in runs:
            files.update({entry["path"]: entry for entry in run["files"]})
        results = [FileResult(e["path"], e["reason"], [Outcome(**o) for o in e["outcomes"]], e["seconds"],
                              e.get("features", [])) for e in sorted(files.values(), key=lambda e: e["path"])]
        meta = {k: v for k, v in runs[-1].items() if k not in ("directories", "failure_reasons", "files")}
        meta["seconds"] = round(sum(r.get("seconds", 0) for r in runs), 1)
        meta["selection"] = " + ".join(str(r.get("selection", "all")) for r in runs) + " (later runs replace files)"
        out.append(to_json(results, meta))
    return out


def side_by_side(pages: list[dict]) -> str:
    """One section per catalog backend: the runs' per-directory in-scope counts and pass rates side by side (one
    column group per DuckLake version, 1.0 first), the 1.1 feature files per version, then each run's failing
    1.1 feature files."""
    lines: list[str] = []
    by_catalog: dict[str, list[dict]] = {}
    for page in pages:
        by_catalog.setdefault(page["catalog"], []).append(page)
    for catalog, runs in by_catalog.items():
        runs = sorted(runs, key=lambda d: d.get("ducklake_version", "1.0"))
        versions = [d.get("ducklake_version", "1.0") for d in runs]
        versions = [f"{v} #{versions[:i].count(v) + 1}" if versions.count(v) > 1 else v  # runs kept apart
                    for i, v in enumerate(versions)]
        lines += [f"## Catalog {catalog}: DuckLake {' vs '.join(versions)}", "",
                  "; ".join(f"{v}: commit {d.get('commit', '?')[:12]}, {d.get('seconds', 0):.0f} s, "
                            f"{len(d['files'])} files ({d.get('selection', 'all')})"
                            for v, d in zip(versions, runs, strict=True)), "",
                  "| directory | " + " | ".join(f"{v} files (out) | {v} in scope | {v} passed | {v} %"
                                                 for v in versions) + " |",
                  "|---|" + "---|---|---|---|" * len(versions)]
        names = sorted({n for d in runs for n in d["directories"] if n != "TOTAL"}) + ["TOTAL"]
        for name in names:
            bold = "**" if name == "TOTAL" else ""
            cells = []
            for d in runs:
                row = d["directories"].get(name)
                share = "-" if row is None else f"{bold}{_percent(row['passed'], row['in_scope'])}{bold}"
                cells += ["-", "-", "-", "-"] if row is None else [f"{row['files']} ({row['files_out']})",
                                                                   str(row["in_scope"]), str(row["passed"]), share]
            lines.append(f"| {bold}{name}{bold} | " + " | ".join(cells) + " |")
        cells = []
        for d in runs:
            shared = shared_counts(d)
            cells += ["-"] * 4 if not d["files"] else ["", str(shared["in_scope"]), str(shared["passed"]),
                                                        f"**{_percent(shared['passed'], shared['in_scope'])}**"]
        lines.append("| **TOTAL without the 1.1 feature files** | " + " | ".join(cells) + " |")
        lines += ["", "DuckLake 1.1 feature files (report.V11_FEATURES; a file can count under several):", "",
                  "| feature | " + " | ".join(f"{v} files (out) | {v} in scope | {v} passed | {v} %" for v in versions)
                  + " |", "|---|" + "---|---|---|---|" * len(versions)]
        features = [feature_counts(d) for d in runs]
        for name in V11_FEATURES:
            cells = []
            for counts, d in zip(features, runs, strict=True):
                row = counts[name]
                cells += ["-"] * 4 if not d["files"] else [  # a run kept without its files' outcomes
                    f"{row['files']} ({row['files_out']})", str(row["in_scope"]), str(row["passed"]),
                    _percent(row["passed"], row["in_scope"])]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        for version, d in zip(versions, runs, strict=True):
            failing = [(e["path"].split("test/sql/", 1)[-1], e) for e in d["files"] if e.get("features")
                       and any(o["status"] == "fail" for o in e["outcomes"])]
            if not failing:
                continue
            lines += ["", f"Failing 1.1 feature files on {version} ({catalog}):", ""]
            for path, entry in failing:
                bad = [o for o in entry["outcomes"] if o["status"] == "fail"]
                lines.append(f"- {path}: {len(bad)} failed, e.g. line {bad[0]['line']}: {bad[0]['reason'][:120]}")
        lines.append("")
    return "\n".join(lines) + "\n"
