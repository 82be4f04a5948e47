"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time


def timed(fn, *args) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def median_time(fn, repeat: int) -> float:
    """Median wall seconds over `repeat` runs after one warm-up."""
    fn()
    return statistics.median(timed(fn) for _ in range(repeat))


def paired(first, second, repeat: int) -> tuple[float, float]:
    """Median wall times of two workloads run alternately (after one warm-up each), so drift hits both alike."""
    first()
    second()
    a, b = [], []
    for i in range(repeat):
        order = [(first, a), (second, b)] if i % 2 == 0 else [(second, b), (first, a)]
        for fn, sink in order:
            sink.append(timed(fn))
    return statistics.median(a), statistics.median(b)
