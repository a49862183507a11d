"""A first adoption: notes are searchable by BM25 as soon as sync commits, their vectors come after.

Real files in a real git repository, the real tantivy index and the packaged model. The vectors'
phase is resumable (stopped between batches here; the embedding cache keeps what was computed),
recall works while vectors are pending and the X-ray says so; BM25 stems the repository's language.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

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
