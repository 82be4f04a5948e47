"""Where the CPU of a run went: the machine's busy share and the CPU seconds of PostgreSQL's processes (Linux /proc).

Used by `commit_throughput.py --profile`: with the writers' own CPU seconds (each measures its process time) it
says whether a commit rate is bounded by the machine (every core busy) or by waiting (locks, round trips).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU jiffies of the whole machine since boot, from /proc/stat's aggregate line."""
    with open("/proc/stat") as fh:
        fields = [int(v) for v in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def process_cpu(name: str) -> dict[int, float]:
    """CPU seconds (user + system) of every process whose command name is `name`, by pid."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                raw = fh.read()
        except OSError:  # exited while we looked
            continue
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        if comm == name:
            fields = raw[raw.rindex(")") + 2:].split()
            out[int(pid)] = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    return out


@dataclass
class Window:
    """Machine and PostgreSQL CPU over a stretch of wall time (start it, run, then `stop`)."""

    wall: float = 0.0
    machine_busy: float = 0.0  # share of all cores busy, 0..1
    cores: int = os.cpu_count() or 1
    postgres_cpu: float = 0.0  # seconds; backends that exited during the window are missed

    def __post_init__(self) -> None:
        self._t0 = time.perf_counter()
        self._m0 = machine_jiffies()
        self._pg0 = process_cpu("postgres")

    def stop(self) -> Window:
        """Close the window: fill in wall time, machine busy share and PostgreSQL CPU seconds."""
        busy, total = machine_jiffies()
        self.wall = time.perf_counter() - self._t0
        self.machine_busy = (busy - self._m0[0]) / max(1, total - self._m0[1])
        pg = process_cpu("postgres")
        self.postgres_cpu = sum(v - self._pg0.get(pid, 0.0) for pid, v in pg.items())
        return self


def available() -> bool:
    """Whether /proc can be read (Linux) and PostgreSQL runs on this machine (its processes are visible)."""
    return os.path.exists("/proc/stat") and bool(process_cpu("postgres"))
