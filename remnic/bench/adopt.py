"""Adoption benchmark: a generated vault of notes (:mod:`.vault`) adopted by a real `remnic sync run`.

1. ``remnic init VAULT --adopt '**'`` (not timed), then a ``remnic sync run`` subprocess.
   A poller in this process reads the live catalog (read-only) every 50 ms: the time
   until it holds every valid note is "all notes BM25-searchable" (tantivy commits before
   the catalog, so by then tantivy has them; its document count is checked too). The
   process then computes the vectors; its exit is "embeddings complete". Peak RSS is the
   sync process's own (``wait4``).
2. The model's raw throughput: the same default embedder, in this process, over a sample
   of the vault's own texts (bulk path, like the sync's second phase).
3. Notes rejected (malformed), and user values rewritten: every line of each note's
   original frontmatter must still be there, in order, and its body byte for byte.
4. Every long note (5,000-20,000 characters) recalled by a phrase from its end, with
   default settings (``Memory.recall``, top 10).
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import Report, md_table
from .vault import Vault, generate

Log = Callable[[str], None] | None
_VECTORS = re.compile(r"computed the vectors of (\d+) notes \((\d+) texts embedded\) in ([\d.]+)s")


def _indexed(root: Path) -> int:
    """Memories in the live catalog (0 while there is none)."""
    try:
        name = (root / ".remnic" / "index" / "CURRENT").read_text().strip()
        conn = sqlite3.connect(f"file:{root / '.remnic' / 'index' / name / 'catalog.sqlite'}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0])
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return 0


def _tantivy_docs(root: Path) -> int:
    from remnic.index.bm25 import Bm25Index

    name = (root / ".remnic" / "index" / "CURRENT").read_text().strip()
    return int(Bm25Index(root / ".remnic" / "index" / name / "tantivy").searcher.num_docs)


def _front_lines(text: str) -> tuple[list[str], str]:
    """(the frontmatter's lines, the body) of a note as written; no frontmatter: ([], text)."""
    for fence in ("---", "+++"):
        if text.startswith(fence + "\n"):
            end = text.find("\n" + fence + "\n", len(fence))
            if end >= 0:
                return text[len(fence) + 1 : end].split("\n"), text[end + len(fence) + 2 :]
    return [], text


def rewritten(before: str, after: str) -> bool:
    """Whether a user's value changed: a line of the original frontmatter missing (in order) or a body changed."""
    lines, body = _front_lines(before)
    new_lines, new_body = _front_lines(after)
    if not lines and new_lines:
        return not after.endswith(before) and new_body != body
    rest = iter(new_lines)
    return not all(any(line == other for other in rest) for line in lines) or new_body != body


def sync_run(root: Path, expected: int, log: Log) -> dict[str, Any]:
    """Run ``remnic sync run`` on ``root``; times to searchable and to vectors, peak RSS, its output."""
    found: dict[str, float] = {}
    stop = threading.Event()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "remnic", "sync", "run", "--memory-dir", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )

    def poll() -> None:
        while not stop.is_set():
            if _indexed(root) >= expected:
                found["bm25"] = time.perf_counter() - t0
                found["tantivy"] = _tantivy_docs(root)
                return
            time.sleep(0.05)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - t0
    stop.set()
    poller.join()
    match = _VECTORS.search(out)
    if log:
        log(
            f"  sync run: exit {proc.returncode}, {elapsed:.1f}s, searchable after {found.get('bm25', float('nan')):.1f}s"
        )
    return {
        "exit": proc.returncode,
        "bm25_s": found.get("bm25"),
        "tantivy_docs": found.get("tantivy"),
        "total_s": elapsed,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "filled": int(match.group(1)) if match else 0,
        "embedded": int(match.group(2)) if match else 0,
        "embed_s": float(match.group(3)) if match else float("nan"),
        "malformed": sum(1 for line in out.splitlines() if line.startswith("! ")),
    }


def raw_throughput(root: Path, sample: int = 1536) -> float:
    """Texts per second of the default model over a sample of the vault's own texts (bulk path)."""
    from remnic.config import load_settings
    from remnic.index import text as T
    from remnic.index.embed import Embedder, EmbedderSpec
    from remnic.service.memory import Memory

    with Memory.open(settings=load_settings(root)) as memory:
        records = memory.list()
    rules = T.TextRules()
    texts = [t for r in records for t in T.chunk_plan(r.content, T.title_of(r), rules).texts]
    random.Random(5).shuffle(texts)
    texts = texts[:sample]
    embedder = Embedder(EmbedderSpec())
    embedder.embed(texts[:8])  # load the model outside the timing
    t = time.perf_counter()
    embedder.embed(texts)
    return len(texts) / (time.perf_counter() - t)


def long_notes_recalled(root: Path, vault: Vault) -> tuple[int, int]:
    """(long notes in the hits of a default recall of a phrase from their end, ranked first)."""
    from remnic.config import load_settings
    from remnic.service.memory import Memory

    found = first = 0
    with Memory.open(settings=load_settings(root)) as memory:
        for note in vault.long_notes:
            hits = [h.path for h in memory.recall(f"the {note.tail}")]
            found += note.path in hits
            first += bool(hits) and hits[0] == note.path
    return found, first


def run_adopt(n: int = 2000, *, seed: int = 18, log: Log = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="remnic-bench-adopt-") as tmp:
        root = Path(tmp) / "vault"
        vault = generate(root, n, seed)
        if log:
            log(
                f"  generated {n} notes ({sum(len(x.text) for x in vault.notes):,} chars), {len(vault.long_notes)} long"
            )
        subprocess.run(
            [sys.executable, "-m", "remnic", "init", str(root), "--adopt", "**"], check=True, capture_output=True
        )
        expected = n - len(vault.invalid_yaml)
        run = sync_run(root, expected, log)
        status = json.loads(
            subprocess.run(
                [sys.executable, "-m", "remnic", "status", "--json", "--memory-dir", str(root)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        changed = [
            note.path
            for note in vault.notes
            if note.kind != "invalid-yaml" and rewritten(note.text, (root / note.path).read_text(encoding="utf-8"))
        ]
        untouched_invalid = sum((root / p).read_text(encoding="utf-8") == t.text for p, t in _by_path(vault).items())
        raw = raw_throughput(root)
        found, first = long_notes_recalled(root, vault)
        pending = status["index"].get("vectorsPending", 0)
    return {
        "notes": n,
        "chars": sum(len(x.text) for x in vault.notes),
        "long": len(vault.long_notes),
        "invalid_yaml": len(vault.invalid_yaml),
        "expected": expected,
        **run,
        "indexed": status["index"].get("count"),
        "vectors_pending_after": pending,
        "rewritten": changed,
        "invalid_untouched": untouched_invalid,
        "raw_texts_per_s": raw,
        "long_found": found,
        "long_first": first,
    }


def _by_path(vault: Vault) -> dict[str, Any]:
    return {note.path: note for note in vault.notes if note.kind == "invalid-yaml"}


def render(r: dict[str, Any]) -> str:
    rate = r["embedded"] / r["embed_s"] if r["embed_s"] and r["embed_s"] == r["embed_s"] else float("nan")
    bm25 = r["bm25_s"]
    rows = [
        [
            "all notes BM25-searchable after `sync run` starts",
            f"{bm25:.1f} s ({r['tantivy_docs']} in tantivy)" if bm25 is not None else "never",
            "≤ 15 s",
        ],
        [
            "embeddings complete (process exit)",
            f"{r['total_s']:.1f} s ({r['embedded']:,} texts in {r['embed_s']:.1f} s: {rate:.0f} texts/s)",
            "—",
        ],
        [
            "second phase vs the model's raw throughput",
            f"{rate:.0f} / {r['raw_texts_per_s']:.0f} texts/s = {rate / r['raw_texts_per_s']:.2f}×",
            "the model's throughput",
        ],
        ["peak RSS of the `sync run` process", f"{r['peak_rss_mb']:.0f} MB", "≤ 500 MB"],
        [
            "notes rejected",
            f"{r['malformed']} (all {r['invalid_yaml']} with unparsable YAML: "
            f"{r['invalid_untouched']} left byte for byte)",
            "0 except unparsable YAML",
        ],
        ["notes with a user value rewritten", str(len(r["rewritten"])), "0"],
        [
            "long notes recalled by a phrase from their end (defaults)",
            f"{r['long_found']}/{r['long']} ({r['long_first']} ranked first)",
            f"{r['long']}/{r['long']}",
        ],
        ["vectors still pending after the run", str(r["vectors_pending_after"]), "0"],
    ]
    return md_table(["measurement", "result", "target"], rows) + (
        f"\n\nA generated vault of {r['notes']:,} notes ({r['chars']:,} characters; most of a few sentences, "
        f"{r['long']} of 5,000-20,000 characters with headings) with `[[wikilinks]]`, aliases, `#tags` and foreign "
        "frontmatter (`status: accepted`, `confidence: high`, `tags: a, b`, `updated: Jan 5, 2024`, numeric ids, "
        f"TOML `+++` blocks, {r['invalid_yaml']} blocks of YAML that do not parse), adopted by `remnic init --adopt "
        "'**'` and a real `remnic sync run` process: BM25 first, then the vectors (shortest texts first, batches "
        "of ~1,024 texts). Raw throughput: the default embedder over 1,536 of the vault's texts in one call. "
        "Values rewritten: every line of each note's frontmatter and its body compared byte for byte. "
        "`remnic benchmark adopt` or `python -m remnic.bench adopt`."
    )


def run(quick: bool = False) -> Report:
    result = run_adopt(400 if quick else 2000, log=lambda m: print(m, file=sys.stderr, flush=True))
    return Report(
        "adopt", "Adopting a notes vault", render(result), {k: v for k, v in result.items() if k != "rewritten"}
    )
