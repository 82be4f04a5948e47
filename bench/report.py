"""Result rows of the benchmark cases, and the report they make: results.md plus PNG plots."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib import metadata


@dataclass
class Row:
    """One measurement: ours against its baseline, measured in the same run (ratio = ours / baseline)."""

    case: str
    metric: str
    ours: float | None
    baseline: float | None
    unit: str = "s"
    notes: str = ""
    baseline_name: str = ""
    group: str = ""  # rows of a case sharing a group are plotted together
    ratio: float | None = field(default=None)

    def __post_init__(self) -> None:
        if self.ratio is None and self.ours is not None and self.baseline:
            self.ratio = self.ours / self.baseline

    def as_dict(self) -> dict:
        """The row as plain JSON-able values."""
        return asdict(self)


def machine() -> dict[str, str]:
    """Cores, RAM, CPU model, OS: what the numbers depend on."""
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        ram_text = f"{ram:.0f} GiB"
    except (ValueError, OSError):
        ram_text = "unknown"
    return {"cores": str(os.cpu_count()), "ram": ram_text, "cpu": cpu,
            "os": f"{platform.system()} {platform.release()}"}


def versions() -> dict[str, str]:
    """Versions of Python, Java and the engines compared."""
    out = {"python": platform.python_version()}
    for dist in ("spark-ducklake", "pyspark", "pyarrow", "sqlalchemy", "duckdb", "duckdb-extension-ducklake",
                 "pyiceberg", "deltalake", "psycopg"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    out["java"] = _java_version()
    out["postgresql"] = _postgres_version()
    return out


def _java_version() -> str:
    try:
        text = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return "not found"
    match = re.search(r'version "([^"]+)"', text)
    return match.group(1) if match else text.strip().splitlines()[0] if text.strip() else "unknown"


def _postgres_version() -> str:
    try:
        import psycopg
        from common import PG_DSN

        with psycopg.connect(PG_DSN, connect_timeout=3) as con:
            return con.execute("SHOW server_version").fetchone()[0]
    except Exception:  # noqa: BLE001 - the report just says so
        return "not reachable"


def fmt(value: float | None, unit: str) -> str:
    """A number for the table, in its unit."""
    if value is None:
        return "—"
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "ms":
        return f"{value:.1f} ms" if value < 1000 else f"{value / 1000:.2f} s"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}".strip()
    return f"{value:.2f} {unit}".strip()


def markdown(rows: list[Row], mode: str, started: datetime, seconds: float, cases: dict[str, str],
             errors: dict[str, str], load_at_start: float | None = None) -> str:
    """The whole results.md."""
    mach, vers = machine(), versions()
    load = os.getloadavg()[0]
    busy = "" if load_at_start is None else (
        f" Load average (1 min) at start {load_at_start:.1f}, at end {load:.1f}: with more than "
        f"{mach['cores']} the machine was shared with other work, which slows both sides of every ratio.")
    lines = [
        "# spark-ducklake benchmark results",
        "",
        f"Mode **{mode}**, run {started.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC, {seconds / 60:.1f} min in "
        "all. Every ratio is ours / baseline, both measured in this run on this machine (below 1: ours is "
        "faster, or for rates, above 1).",
        "",
        f"Machine: {mach['cores']} cores, {mach['ram']} RAM, {mach['cpu']}, {mach['os']}.{busy}",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()) + ".",
        "",
    ]
    extra = {r.case: f"More: {r.case}" for r in rows if r.case not in cases}  # cases of newer scripts
    for case, title in {**cases, **extra}.items():
        case_rows = [r for r in rows if r.case == case]
        if not case_rows and case not in errors:
            continue
        lines += [f"## {title}", ""]
        if case in errors:
            lines += [f"Failed: `{errors[case]}`", ""]
        if case_rows:
            lines += ["| metric | ours | baseline | ratio | notes |", "| --- | ---: | --- | ---: | --- |"]
            for r in case_rows:
                base = fmt(r.baseline, r.unit)
                if r.baseline_name:
                    base = f"{base} ({r.baseline_name})" if r.baseline is not None else r.baseline_name
                ratio = "—" if r.ratio is None else f"{r.ratio:.2f}"
                lines.append(f"| {r.metric} | {fmt(r.ours, r.unit)} | {base} | {ratio} | {r.notes} |")
            lines.append("")
        if os.path.exists(os.path.join(_results_dir(), f"{case}.png")):
            lines += [f"![{case}]({case}.png)", ""]
    return "\n".join(lines)


def _results_dir() -> str:
    return os.environ.get("BENCH_RESULTS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))


def plot(rows: list[Row], case: str, title: str, path: str) -> bool:
    """A PNG of one case: per group, ours next to the baseline for each metric (log scale when spread)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    case_rows = [r for r in rows if r.case == case and r.ours is not None]
    if not case_rows:
        return False
    groups: dict[str, list[Row]] = {}
    for r in case_rows:
        groups.setdefault(r.group or r.unit, []).append(r)
    fig, axes = plt.subplots(len(groups), 1, figsize=(max(6.0, 0.55 * max(map(len, groups.values())) + 3),
                                                      3.4 * len(groups)), squeeze=False)
    for ax, (group, members) in zip(axes[:, 0], groups.items(), strict=True):
        xs = range(len(members))
        width = 0.4
        ours = [r.ours for r in members]
        base = [r.baseline if r.baseline is not None else 0 for r in members]
        ax.bar([x - width / 2 for x in xs], ours, width, label="spark-ducklake", color="#2a6fbb")
        ax.bar([x + width / 2 for x in xs], base, width, label="baseline", color="#f0a030")
        for x, r in zip(xs, members, strict=True):
            if r.ratio is not None:
                top = max(r.ours, r.baseline or 0)
                ax.annotate(f"{r.ratio:.2f}x", (x, top), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([_short(r.metric, 44) for r in members], rotation=35, ha="right", fontsize=7)
        values = [v for v in ours + base if v]
        if values and max(values) / max(min(values), 1e-12) > 50:
            ax.set_yscale("log")
        ax.set_ylabel(members[0].unit)
        names = sorted({r.baseline_name for r in members if r.baseline_name})
        ax.set_title(f"{group}" + (f" — baseline: {', '.join(names)}" if names else ""), fontsize=9)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_ratios(rows: list[Row], path: str) -> None:
    """Every ratio of the run on one chart (log scale, 1.0 marked)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rated = [r for r in rows if r.ratio]
    if not rated:
        return
    fig, ax = plt.subplots(figsize=(11, 0.22 * len(rated) + 1.5))
    labels = [f"{r.case}: {_short(r.metric, 48)}" for r in rated]
    colors = ["#2a6fbb" if (r.ratio <= 1) != (r.unit.endswith("/s")) else "#c0392b" for r in rated]
    ax.barh(range(len(rated)), [r.ratio for r in rated], color=colors)
    ax.set_yticks(range(len(rated)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("ours / baseline (blue: ours better)")
    fig.tight_layout()
    fig.subplots_adjust(left=0.42)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
