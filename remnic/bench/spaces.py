"""Spaces benchmark: many clones of one bare remote editing the same memories, and a large pull.

1. Simulation: N clones (2, 8, 32; 2 and 8 with --quick) of one bare git remote. Each
   round every clone makes random changes — stores, hand edits of a memory's body
   (appending a sentence, committed by the pull), tag additions, forgets — then all
   clones pull and push in a random order (a push refused because the remote moved
   pulls again first). After the rounds every clone pulls once more. Every change
   carries a unique token; at the end every token must be in every clone's files
   (present, or in a memory that is forgotten or kept as a review copy), no file may
   hold conflict markers or be invalid, all clones must be at one commit, and each
   clone's index must hold exactly its memory files at HEAD.
2. Large pull: a space of 10,000 memories (1,000 with --quick) with its index built;
   another clone edits 100 memories and pushes; ``space pull`` is timed until the
   index is up to date (in-process, and as a whole ``remnic space pull`` process).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remnic.config import settings_for
from remnic.errors import RemoteMovedError
from remnic.repo import remote as _remote
from remnic.service.memory import Memory

from . import Report, md_table, percentile
from .words import WORDS

_MARKERS = re.compile(r"^(<{7}|>{7})( |$)", re.MULTILINE)


def _sentence(rng: random.Random, token: str) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(8)).capitalize() + f" {token}."


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@dataclass
class SimResult:
    clones: int
    rounds: int
    changes: int = 0
    pulls: int = 0
    merges: int = 0
    review_items: int = 0
    push_retries: int = 0
    lost: list[str] = field(default_factory=list)
    marker_files: list[str] = field(default_factory=list)
    invalid_files: list[str] = field(default_factory=list)
    index_mismatches: int = 0
    heads: int = 0
    pull_ms: list[tuple[int, float]] = field(default_factory=list)
    """(memory files the pull changed, milliseconds)."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.lost or self.marker_files or self.invalid_files or self.index_mismatches) and self.heads == 1


@contextmanager
def _workspace(prefix: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def make_clones(base: Path, n: int, seed_memories: int, rng: random.Random) -> tuple[Path, list[Memory]]:
    """A bare remote holding a seeded memory repository, and ``n`` clones of it (the first is the seeder)."""
    bare = base / "remote.git"
    _git(base, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    first = Memory.init(base / "c0", settings=settings_for(base / "c0"))
    first.import_records([{"content": _sentence(rng, f"seed{i}"), "category": "fact"} for i in range(seed_memories)])
    _git(first.root, "remote", "add", "origin", str(bare))
    first.space_push()
    clones = [first]
    for i in range(1, n):
        root = base / f"c{i}"
        cloned = _remote.clone(str(bare), root, 300)
        assert cloned.ok, cloned.err
        mem = Memory.open(settings=settings_for(root))
        mem.install_merge_driver()
        clones.append(mem)
    for i, mem in enumerate(clones):
        _git(mem.root, "config", "user.name", f"clone {i}")
        _git(mem.root, "config", "user.email", f"clone{i}@example.com")
        mem.ledger._env = None  # the identity just configured
    return bare, clones


def _change(mem: Memory, rng: random.Random, token: str) -> bool:
    """One random change carrying ``token``; False when there was nothing to change."""
    records = [r for r in mem.list() if r.status in ("active", "pending_review")]
    kind = rng.choices(("store", "edit", "tag", "forget"), weights=(3, 4, 2, 1))[0]
    if kind == "store" or not records:
        mem.store(_sentence(rng, token), category="fact", source="bench")
        return True
    record = rng.choice(records)
    if kind == "edit":
        path = mem.root / record.path
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + _sentence(rng, token) + "\n")
    elif kind == "tag":
        mem.update(record.id, {"tags": [*record.tags, token]}, source="bench")
    else:
        path = mem.root / record.path
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + _sentence(rng, token) + "\n")
        mem.sync(source="bench")
        mem.forget(record.id, reason=token, source="bench")
    return True


def _sync_with_remote(mem: Memory, result: SimResult) -> None:
    while True:
        report = mem.space_pull()
        result.pulls += 1
        result.merges += report.outcome == "merge"
        result.review_items += len(report.conflicts)
        result.pull_ms.append((len(report.changed), report.elapsed_ms))
        try:
            mem.space_push()
            return
        except RemoteMovedError:
            result.push_retries += 1


def check_clones(clones: list[Memory], tokens: list[str], result: SimResult) -> None:
    heads = set()
    for mem in clones:
        heads.add(mem.head())
        texts = []
        for path in sorted(mem.root.rglob("*.md")):
            rel = path.relative_to(mem.root).as_posix()
            if rel.startswith((".git/", ".remnic/")):
                continue
            text = path.read_text(encoding="utf-8")
            texts.append(text)
            if _MARKERS.search(text):
                result.marker_files.append(f"{mem.root.name}/{rel}")
        _records, problems = mem.check_files()
        result.invalid_files += [f"{mem.root.name}/{p.path}" for p in problems]
        everything = "\n".join(texts)
        result.lost += [f"{mem.root.name}:{t}" for t in tokens if t not in everything]
        live = {r.path: r.id for r in mem.list()}
        mem.settle_index()
        index = mem.index
        manifest = index.manifest()
        result.index_mismatches += sum(1 for p, i in live.items() if index.path_of(i) != p)
        result.index_mismatches += int(manifest is None or manifest.commit != mem.head())
    result.heads = len(heads)


def simulate(
    n_clones: int, rounds: int, changes_per_round: int = 2, seed: int = 16, base: Path | None = None
) -> SimResult:
    """The whole simulation (see the module docstring); ``base``: a directory to work in (else a temp dir)."""
    rng = random.Random(seed)
    result = SimResult(n_clones, rounds)
    started = time.perf_counter()
    with _workspace("remnic-bench-spaces-") if base is None else _nullcontext(base) as where:
        _bare, clones = make_clones(where, n_clones, seed_memories=6, rng=rng)
        tokens: list[str] = []
        try:
            for r in range(rounds):
                for i, mem in enumerate(clones):
                    for k in range(changes_per_round):
                        token = f"tok{r}x{i}x{k}"
                        if _change(mem, rng, token):
                            tokens.append(token)
                            result.changes += 1
                for mem in rng.sample(clones, len(clones)):
                    _sync_with_remote(mem, result)
            for mem in clones:
                mem.space_pull()
            check_clones(clones, tokens, result)
        finally:
            for mem in clones:
                mem.close()
    result.seconds = time.perf_counter() - started
    return result


@contextmanager
def _nullcontext(path: Path) -> Iterator[Path]:
    yield path


def large_pull(n_memories: int, changed: int, rng: random.Random) -> dict[str, Any]:
    """Time ``space pull`` of ``changed`` edited memories into an indexed space of ``n_memories``."""
    with _workspace("remnic-bench-spaces-large-") as base:
        bare = base / "remote.git"
        _git(base, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
        writer = Memory.init(base / "writer", settings=settings_for(base / "writer"))
        result = writer.import_records(
            [{"content": _sentence(rng, f"m{i}"), "category": "fact"} for i in range(n_memories)]
        )
        _git(writer.root, "remote", "add", "origin", str(bare))
        writer.space_push()
        _remote.clone(str(bare), base / "reader", 600)
        reader = Memory.open(settings=settings_for(base / "reader"))
        reader.install_merge_driver()
        t = time.perf_counter()
        reader.reindex()
        reader.sync(source="bench")  # as `space clone` leaves it: sync state at HEAD
        build_s = time.perf_counter() - t
        timings = []
        for attempt in range(2):
            for record in rng.sample(list(result.records), changed):
                path = writer.root / record.path
                path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f" edited{attempt}.\n")
            writer.sync(source="bench")
            writer.space_push()
            if attempt == 0:
                report = reader.space_pull()
                manifest = reader.index.manifest()
                fresh = manifest is not None and manifest.commit == reader.head()
                phases = ", ".join(f"{k} {v / 1000:.2f} s" for k, v in report.phases_ms.items())
                label = f"in-process `Memory.space_pull()` ({phases})"
                timings.append((label, report.elapsed_ms, len(report.changed), fresh))
            else:
                reader.close()
                t = time.perf_counter()
                out = subprocess.run(
                    [sys.executable, "-m", "remnic", "space", "pull", "--memory-dir", str(reader.root), "--json"],
                    check=True,
                    capture_output=True,
                    env={**os.environ, "REMNIC_NO_DAEMON": "1"},
                    text=True,
                )
                wall = (time.perf_counter() - t) * 1000
                inside = json.loads(out.stdout)
                phases = ", ".join(f"{k} {v / 1000:.2f} s" for k, v in inside["phasesMs"].items())
                timings.append((f"… of which the pull itself ({phases})", inside["elapsedMs"], changed, True))
                reader = Memory.open(settings=settings_for(base / "reader"))
                fresh = reader.index.health().to_dict().get("commit") == reader.head()
                timings.append(("whole `remnic space pull` process", wall, changed, fresh))
        hits = [h.path for h in reader.recall("edited1", top_k=3)]
        reader.close()
        writer.close()
    return {"build_s": build_s, "timings": timings, "recall_ok": bool(hits)}


def run(quick: bool = False) -> Report:
    sizes = (2, 8) if quick else (2, 8, 32)
    rounds = 3 if quick else 4
    sims = [simulate(n, rounds) for n in sizes]
    rows = []
    for s in sims:
        times = [ms for _n, ms in s.pull_ms]
        rows.append(
            [
                s.clones,
                s.rounds,
                s.changes,
                s.pulls,
                s.merges,
                s.review_items,
                s.push_retries,
                len(s.lost),
                len(s.marker_files),
                len(s.invalid_files),
                s.index_mismatches,
                f"{percentile(times, 50):.0f} / {percentile(times, 95):.0f} ms",
                f"{s.seconds:.0f} s",
            ]
        )
    buckets: dict[str, list[float]] = {"0": [], "1-5": [], "6-20": [], "21+": []}
    for s in sims:
        for n, ms in s.pull_ms:
            key = "0" if n == 0 else "1-5" if n <= 5 else "6-20" if n <= 20 else "21+"
            buckets[key].append(ms)
    bucket_rows = [
        [k, len(v), f"{percentile(v, 50):.0f} ms", f"{percentile(v, 95):.0f} ms"] for k, v in buckets.items() if v
    ]
    n_memories = 1_000 if quick else 10_000
    large = large_pull(n_memories, 100, random.Random(7))
    large_rows = [
        [what, f"{ms / 1000:.2f} s", n, "yes" if fresh else "NO", "≤ 3 s"] for what, ms, n, fresh in large["timings"]
    ]
    markdown = (
        md_table(
            [
                "clones",
                "rounds",
                "changes",
                "pulls",
                "merges",
                "review items",
                "push retries",
                "lost edits",
                "conflict markers",
                "invalid files",
                "index mismatches",
                "pull p50 / p95",
                "wall",
            ],
            rows,
        )
        + "\n\nPull time against the number of memory files the pull changed (all simulations):\n\n"
        + md_table(["files changed", "pulls", "p50", "p95"], bucket_rows)
        + f"\n\n`space pull` of 100 changed memories into a {n_memories:,}-memory space "
        f"(its index built first in {large['build_s']:.0f} s):\n\n"
        + md_table(["measurement", "time", "files", "index at HEAD", "target"], large_rows)
        + "\n\nEach clone is a real git clone of one bare remote on the local disk; each round every clone makes "
        "2 random changes (store, a hand edit of a body, a tag, a forget), then all pull and push in a random "
        "order. Every change carries a unique token that must be in every clone at the end. "
        "`python -m remnic.bench spaces`."
    )
    data = {
        "sims": [{"clones": s.clones, "ok": s.ok, "lost": s.lost, "markers": s.marker_files} for s in sims],
        "large": large,
    }
    return Report("spaces", "Spaces: clones of one remote, merges and pulls", markdown, data)
