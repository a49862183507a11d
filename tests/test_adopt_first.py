"""A first adoption: notes are searchable by BM25 as soon as sync commits, their vectors come after.

Real files in a real git repository, the real tantivy index and the packaged model. The vectors'
phase is resumable (stopped between batches here; the embedding cache keeps what was computed),
recall works while vectors are pending and the X-ray says so; BM25 stems the repository's language.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.index.bm25 import analyze, query_terms
from remnic.render.xray import render_xray
from remnic.service.memory import Memory

WORDS = [
    "harbour",
    "market",
    "ferry",
    "bakery",
    "garden",
    "tower",
    "bridge",
    "river",
    "lantern",
    "orchard",
    "meadow",
    "chapel",
]


def vault(tmp_path: Path, **sync: object) -> Memory:
    root = tmp_path / "vault"
    return Memory.init(root, settings=settings_for(root, store={"include": ["**"]}, sync=sync), adopt=["**"])


def write(memory: Memory, rel: str, text: str) -> Path:
    path = memory.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def long_note(n: int, tail: str, seed: int = 3) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    while sum(len(p) + 2 for p in parts) < n - len(tail) - 40:
        if len(parts) % 6 == 0:
            parts.append(f"## Part {len(parts) // 6 + 1}")
        parts.append(" ".join(" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "." for _ in range(4)))
    return "\n\n".join([*parts, tail, "The end of the harbour notes."]) + "\n"


def test_notes_are_searchable_by_bm25_before_their_vectors_and_the_xray_says_so(tmp_path: Path) -> None:
    memory = vault(tmp_path, defer_embeddings_above=0)
    write(memory, "notes/door.md", "---\nstatus: accepted\n---\nThe lighthouse keeper repaints the crimson door.\n")
    write(memory, "notes/bread.md", "The night baker starts the sourdough at three in the morning.\n")
    write(memory, "notes/ferry.md", "The ferry to the island leaves from pier four on weekdays.\n")
    report = memory.sync()
    assert report.commit and len(report.changes) == 3
    assert memory.vectors_pending() == (3, 3)  # one text each: none was embedded by the sync
    assert memory.status()["index"]["vectorsPending"] == 3
    assert any(c["name"] == "vectors" and "3 memories" in c["detail"] for c in memory.doctor())

    result = memory.recall("crimson door", xray=True)
    assert [h.path for h in result.hits] == ["notes/door.md"]
    assert result.hits[0].signals["vectorRank"] is None and result.index["vectorsPending"] == 3
    snapshot = result.xray
    assert snapshot.tier_explain.vectors_pending == 3
    assert snapshot.tier_explain.to_dict()["vectorsPending"] == 3
    assert "vectors-pending: 3 memories not embedded yet" in render_xray(snapshot, "text")
    assert "| Vectors pending | 3 memories" in render_xray(snapshot, "markdown")

    done = memory.embed_pending()
    assert (done.filled, done.texts, done.remaining, done.interrupted) == (3, 3, 0, False)
    assert memory.vectors_pending() == (0, 0) and memory.status()["index"]["vectorsPending"] == 0
    assert "vectors" not in {c["name"] for c in memory.doctor()}
    # Now the vectors find a paraphrase that shares no word with the note.
    para = memory.recall("who bakes bread before dawn?", top_k=1, xray=True)
    assert para.hits[0].path == "notes/bread.md" and para.hits[0].signals["vectorRank"] == 1
    assert "vectorsPending" not in para.xray.tier_explain.to_dict() and "vectorsPending" not in para.index
    memory.close()


def test_a_small_sync_still_embeds_inline(tmp_path: Path) -> None:
    memory = vault(tmp_path)  # sync.deferEmbeddingsAbove: 256 texts
    write(memory, "notes/a.md", "The choir rehearses on Thursdays in the old chapel.\n")
    memory.sync()
    assert memory.vectors_pending() == (0, 0)
    assert memory.recall("when does the choir practise", top_k=1).hits[0].signals["vectorRank"] == 1
    memory.close()


def test_the_vectors_phase_stops_between_batches_and_resumes_where_it_stopped(tmp_path: Path) -> None:
    memory = vault(tmp_path, defer_embeddings_above=0)
    for i in range(12):
        write(memory, f"notes/n{i:02d}.md", f"The harbour ferry number {i} leaves early{' and late' * i}.\n")
    memory.sync()
    notes, texts = memory.vectors_pending()
    assert notes == texts == 12  # one sentence, one text each
    with memory.index.lock:
        batch = memory.index.view()[2].pending_batch(4)
    assert [p for p, _, _ in batch] == [
        "notes/n00.md",
        "notes/n01.md",
        "notes/n02.md",
        "notes/n03.md",
    ]  # shortest first

    rounds = iter([False, True])
    first = memory.index.embed_pending(stop=lambda: next(rounds), batch_texts=4)
    assert first.interrupted and first.filled >= 1 and first.remaining == 12 - first.filled
    assert first.embedded == first.texts  # all of them ran through the model
    assert memory.vectors_pending()[0] == first.remaining
    hit = memory.recall("harbour ferry", top_k=20)
    assert len(hit.hits) == 12  # recall works meanwhile: the rest by BM25

    # A new process continues with what is left; the vectors computed before are not computed again.
    memory.close()
    again = Memory.open(settings=settings_for(memory.root, store={"include": ["**"]}))
    rest = again.embed_pending()
    assert rest.filled == 12 - first.filled and rest.remaining == 0 and not rest.interrupted
    assert rest.texts == texts - first.texts and rest.embedded == rest.texts
    assert again.vectors_pending() == (0, 0)
    again.close()


def test_sync_run_makes_notes_searchable_then_computes_their_vectors(tmp_path: Path) -> None:
    memory = vault(tmp_path)
    config = memory.root / "remnic.config.json"
    data = json.loads(config.read_text())
    data["sync"] = {"deferEmbeddingsAbove": 0}
    config.write_text(json.dumps(data))
    memory.ledger.git("commit", "-qam", "defer every sync's embeddings")
    memory.close()
    write(memory, "notes/a.md", "The beekeeper checks the hives every Sunday.\n")
    write(memory, "notes/b.md", "---\ntags: bees, honey\n---\nThe honey is jarred in September.\n")
    out = run_cli("sync", "run", "--json", "--memory-dir", str(memory.root))
    assert out.code == 0, out.err
    data = out.json()
    assert len(data["changes"]) == 2 and data["vectors"]["filled"] == 2 and data["vectors"]["remaining"] == 0
    text = run_cli("sync", "run", "--quiet", "--memory-dir", str(memory.root))
    assert text.code == 0 and "computed the vectors" not in text.out and text.err == ""
    status = run_cli("status", "--json", "--memory-dir", str(memory.root)).json()
    assert status["index"]["vectorsPending"] == 0


def test_a_12000_character_note_adopted_from_a_file_is_found_by_a_phrase_near_its_end(tmp_path: Path) -> None:
    memory = vault(tmp_path, defer_embeddings_above=0)
    tail = "The lighthouse keeper repaints the crimson door every April with marine varnish."
    note = long_note(12_000, tail)
    assert 11_800 <= len(note) <= 12_300 and note.index(tail) > 11_000
    path = write(memory, "harbour/town.md", note)
    write(memory, "harbour/market.md", "The harbour market opens at six on Saturdays.\n")
    memory.sync()
    assert path.read_text(encoding="utf-8").endswith(note)  # the body as written
    for phase in ("bm25 only", "with vectors"):
        result = memory.recall("who repaints the crimson door every April?")
        hit = result.hits[0]
        assert hit.path == "harbour/town.md", phase
        assert tail in hit.content and hit.trimmed and len(hit.content) <= result.budget_chars, phase
        memory.embed_pending()
    memory.close()


def test_index_language_stems_the_repositorys_language_and_a_change_rebuilds(tmp_path: Path) -> None:
    assert query_terms("cantar", language="spanish") == analyze("cantadas", language="spanish") == ["cant"]
    assert analyze("cantadas") != analyze("cantar")  # English leaves Spanish verbs apart
    assert analyze("las canciones", language="spanish", stopwords=True) == ["cancion"]  # stopword, accent folded
    assert analyze("Les Misérables", language="none") == ["les", "miserables"]  # no stemmer, still folded

    root = tmp_path / "notas"
    # Stemming alone (no query expansion, which would find 'cantadas' beside 'cantar' in any language).
    plain = {"query_expansion_weight": 0.0}
    memory = Memory.init(root, settings=settings_for(root, store={"include": ["**"]}, recall=plain), adopt=["**"])
    write(memory, "notas/coro.md", "Las canciones fueron cantadas por el coro del pueblo.\n")
    write(memory, "notas/mercado.md", "El mercado abre los sábados a las seis.\n")
    memory.sync()
    english = memory.recall("cantar", top_k=3)
    assert not any(h.signals["bm25Rank"] for h in english.hits)
    memory.close()
    spanish = Memory.open(
        settings=settings_for(root, store={"include": ["**"]}, index={"language": "spanish"}, recall=plain)
    )
    result = spanish.recall("cantar", top_k=3)
    assert result.index["action"] == "rebuild" and "index.language" in result.index["reason"]
    assert result.hits[0].path == "notas/coro.md" and result.hits[0].signals["bm25Rank"] == 1
    spanish.close()


def test_an_unknown_language_is_refused_with_the_options(tmp_path: Path) -> None:
    root = tmp_path / "m"
    Memory.init(root, settings=settings_for(root)).close()
    (root / "remnic.config.json").write_text(json.dumps({"index": {"language": "klingon"}}))
    out = run_cli("status", "--memory-dir", str(root))
    assert out.code == 2 and "index.language" in out.err and "spanish" in out.err


def test_the_watcher_computes_pending_vectors_between_saves(tmp_path: Path) -> None:
    import threading
    import time

    from remnic.drivers.watch import Watcher, watch_line

    memory = vault(tmp_path, defer_embeddings_above=0)
    events: list[dict] = []
    watcher = Watcher(memory, emit=events.append, debounce_ms=100)
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not any(e["event"] == "ready" for e in events):
            assert time.monotonic() < deadline, events
            time.sleep(0.05)
        for i in range(5):
            write(memory, f"notes/w{i}.md", f"The clock mender oils gear number {i} on Mondays.\n")
        while not any(e["event"] == "vectors" and not e["remaining"] for e in events):
            assert time.monotonic() < deadline, events
            time.sleep(0.05)
    finally:
        watcher.request_stop()
        thread.join(timeout=60)
    done = [e for e in events if e["event"] == "vectors"]
    assert sum(e["filled"] for e in done) == 5 and memory.vectors_pending() == (0, 0)
    assert watch_line(done[-1]) == f"computed the vectors of {done[-1]['filled']} notes"
    memory.close()


def test_the_vectors_phase_runs_on_one_bulk_session_with_its_memory_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """embed.bulkMmapThreshold is applied before the rounds (0: not at all), every round shares one
    single-threaded bulk session, the query session is never loaded, and the vectors are the same bytes."""
    import remnic.index.pending as pending
    from remnic.index.embed import Embedder

    original = Embedder._load_session
    loads: list[int | None] = []

    def counted(self: Embedder, threads: int | None = None) -> Any:
        loads.append(threads)
        return original(self, threads)

    monkeypatch.setattr(Embedder, "_load_session", counted)
    thresholds: list[int] = []
    real_threshold = pending.set_mmap_threshold
    monkeypatch.setattr(pending, "set_mmap_threshold", lambda n: thresholds.append(n) or real_threshold(n))
    stored: list[dict[str, bytes]] = []
    for threshold in (2_097_152, 0):
        root = tmp_path / f"vault-{threshold}"
        settings = settings_for(
            root,
            store={"include": ["**"]},
            sync={"defer_embeddings_above": 0},
            embed={"bulk_mmap_threshold": threshold},
        )
        memory = Memory.init(root, settings=settings, adopt=["**"])
        for i in range(12):
            write(memory, f"notes/n{i:02d}.md", f"The harbour ferry number {i} leaves early{' and late' * i}.\n")
        memory.sync()
        embedder = memory.index.embedder
        loads.clear()
        done = memory.embed_pending(batch_texts=4)
        assert (done.filled, done.remaining) == (12, 0)
        assert loads == [1]  # three rounds, one bulk session, and never the (multi-threaded) query session
        assert embedder._held is None
        with memory.index.lock:
            catalog = memory.index.view()[2]
            stored.append(dict(catalog.conn.execute("SELECT path, chunks FROM docs").fetchall()))
        memory.close()
    assert thresholds == [2_097_152, 0]
    assert len(stored[0]) == 12 and stored[0] == stored[1]


def test_set_mmap_threshold_gives_blocks_of_that_size_a_mapping_of_their_own() -> None:
    """Real glibc, in a fresh process: once an 8 MB block was freed glibc's own threshold is above 3 MB."""
    import subprocess
    import sys

    code = """
import ctypes, sys
from remnic.index.pending import set_mmap_threshold

class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Info
libc.free(libc.malloc(8 << 20))
if sys.argv[1] == "set":
    assert set_mmap_threshold(1 << 20)
before = libc.mallinfo2().hblks  # blocks mapped so far (imports have some)
block = libc.malloc(3 << 20)
print(libc.mallinfo2().hblks - before)
libc.free(block)
"""
    mapped = {
        how: int(subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, check=True).stdout)
        for how in ("set", "default")
    }
    assert mapped == {"set": 1, "default": 0}
    from remnic.index.pending import set_mmap_threshold

    assert not set_mmap_threshold(0)  # 0 leaves glibc alone


def test_a_long_notes_texts_are_embedded_in_bounded_slices_and_a_stop_between_them_resumes(tmp_path: Path) -> None:
    """One memory of 21 passage-sized texts is more than a batch: it is embedded a few texts at a time,
    ``stop()`` is asked between slices, and what a stopped run computed is not computed again."""
    memory = vault(tmp_path, defer_embeddings_above=0)
    write(memory, "harbour/long.md", long_note(16_000, "The lighthouse keeper repaints the crimson door."))
    memory.sync()
    notes, texts = memory.vectors_pending()
    assert notes == 1 and texts > 12
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) >= 3  # before the batch, after the first slice, then stop

    first = memory.index.embed_pending(stop=stop, batch_texts=4)
    assert first.interrupted and first.filled == 0 and len(asked) == 3
    assert memory.vectors_pending() == (1, texts)  # its vectors land only when all its texts are done
    rest = memory.index.embed_pending(batch_texts=4)
    assert (rest.filled, rest.remaining, rest.texts) == (1, 0, texts)
    assert 0 < rest.embedded <= texts - 2  # the first two slices came from the embedding cache
    assert memory.vectors_pending() == (0, 0)
    memory.close()
