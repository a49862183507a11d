"""The vocabulary of the synthetic memories the write-path benchmarks store."""

from __future__ import annotations

import random

WORDS = [
    "release", "deploy", "tuesday", "staging", "database", "editor", "tabs", "review",
    "cache", "latency", "alarm", "replica", "vacation", "budget", "meeting", "design",
    "tenant", "migration", "backup", "incident", "customer", "roadmap", "invoice",
]  # fmt: skip


def sentence(rng: random.Random, n: int = 14) -> str:
    """``n`` random words and a unique number, so no two sentences are duplicates."""
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + f" #{rng.randrange(10**9)}"
