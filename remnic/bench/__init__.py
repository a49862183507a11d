"""Benchmarks (`make bench` / `python -m remnic.bench [suite ...]`).

Each suite is a module here with ``run(args) -> Report``; results are printed and
written into ``docs/benchmarks.md`` between markers for that suite, so the docs
always show the latest run. Ratios are measured against baselines in the same
run because these machines are shared and noisy.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


@dataclass
class Report:
    suite: str
    title: str
    markdown: str
    """A self-contained markdown section (tables + a line on how it was measured)."""
    data: dict = field(default_factory=dict)


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds per call over ``repeat`` calls."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def machine_line() -> str:
    import os

    return (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}"
    )


def load_average() -> float:
    """The one-minute load average (0.0 where the platform has none)."""
    import os

    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def measured_line(seconds: float, load_before: float) -> str:
    """``Measured in 120 s (load average 0.9 before, 1.4 after, 2 cores)``: a reader can tell a quiet run
    from one that shared the machine, since absolute latencies depend on it."""
    import os

    return (
        f"Measured in {seconds:.0f} s (load average {load_before:.1f} before, {load_average():.1f} after, "
        f"{os.cpu_count()} cores)"
    )


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        out.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(out)


def write_section(report: Report, docs: Path = DOCS) -> None:
    """Replace (or append) the suite's section in the benchmarks doc."""
    start, end = f"<!-- bench:{report.suite}:start -->", f"<!-- bench:{report.suite}:end -->"
    section = f"{start}\n## {report.title}\n\n{report.markdown.strip()}\n{end}"
    text = docs.read_text(encoding="utf-8") if docs.exists() else "# Benchmarks\n\nWritten by `make bench`.\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    docs.parent.mkdir(parents=True, exist_ok=True)
    docs.write_text(text, encoding="utf-8")
