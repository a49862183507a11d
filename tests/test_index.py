"""The search index on a real tantivy index, the real packaged model and real git repos (no mocks)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from remnic.config import settings_for
from remnic.errors import UsageError, ValidationError
from remnic.index.bm25 import query_terms
from remnic.index.manifest import SCHEMA_VERSION, read_current
from remnic.index.search import SearchIndex
from remnic.memfile.model import content_hash
from remnic.service.memory import Memory

FACTS = [
    ("We cut releases every Tuesday after the standup", "decision"),
    ("Ana prefers tabs over spaces in Python code", "preference"),
    ("The staging database password rotates monthly through Vault", "fact"),
    ("Ticket QZ-4471 tracks the flaky checkout integration test", "fact"),
    ("Our on-call rotation hands over on Monday mornings", "procedure"),
    ("The mobile app uses a dark navy colour palette", "fact"),
]


def _git(memory: Memory, *args: str) -> None:
    memory.ledger.git(*args)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root = tmp_path_factory.mktemp("idx") / "memory"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records([{"content": c, "category": cat} for c, cat in FACTS])
    yield memory
    memory.close()


@pytest.fixture()
def fresh(tmp_path: Path) -> Memory:
    root = tmp_path / "memory"
    memory = Memory.init(root, settings=settings_for(root))
    memory.import_records([{"content": c, "category": cat} for c, cat in FACTS[:3]])
    yield memory
    memory.close()


def _ids(result) -> list[str]:
    return [h.id for h in result.hits]


def test_paraphrase_without_shared_words_is_found_by_vectors(repo: Memory) -> None:
    query = "when do we ship new versions?"
    target = next(r for r in repo.list() if r.content.startswith("We cut releases"))
    from remnic.index.bm25 import analyze

    assert not set(query_terms(query)) & set(analyze(target.content)), "the paraphrase must share no terms"
    result = repo.recall(query, top_k=3)
    top = result.hits[0]
    assert top.id == target.id
    assert top.signals["vectorRank"] == 1 and top.terms.vector > 0
    # No stem is shared: BM25 can only have found it through the query's expansion (versions → releases …).
    assert (top.signals["bm25Rank"] is None and top.terms.bm25 == 0) or "query expanded" in result.stages[0].reason


def test_exact_rare_term_is_found_by_bm25(repo: Memory) -> None:
    result = repo.recall("QZ-4471", top_k=3)
    top = result.hits[0]
    assert "QZ-4471" in top.content
    assert top.signals["bm25Rank"] == 1 and top.terms.bm25 > 0


def test_hits_carry_path_content_frontmatter_and_terms_that_add_up(repo: Memory) -> None:
    result = repo.recall("tabs or spaces", top_k=5)
    hit = result.hits[0]
    assert hit.path.endswith(".md") and (repo.root / hit.path).is_file()
    assert hit.content == repo.get(hit.id).content
    assert hit.frontmatter["id"] == hit.id and hit.category == "preference" and hit.status == "active"
    for h in result.hits:
        t = h.terms
        assert h.score == pytest.approx(
            t.vector
            + t.bm25
            + t.date
            + t.importance
            + t.recency
            + t.status
            + t.propagation
            + t.context
            - t.mmr_penalty,
            abs=1e-9,
        )
    names = [s.name for s in result.stages]
    assert names[:2] == ["namespace-scope", "status-active"] and names[-2:] == ["recall-result-limit", "budget-fit"]
    data = result.to_dict()
    assert data["hits"][0]["scoreDecomposition"]["final"] == pytest.approx(hit.score, abs=1e-6)


def test_find_by_hash_and_path_of(repo: Memory) -> None:
    record = repo.list(category="preference")[0]
    index = repo.index
    assert index.find_by_hash("default", content_hash(record.content)) == record.id
    assert index.find_by_hash("other", content_hash(record.content)) is None
    assert index.path_of(record.id) == record.path
    assert index.path_of("mem_nope") is None
    dup = repo.store(record.content, category="preference")
    assert not dup.changed and dup.commit is None and dup.id == record.id


def test_health_reports_the_manifest(repo: Memory) -> None:
    repo.recall("anything at all", top_k=1)
    health = repo.index.health(repo.ledger).to_dict()
    assert health["state"] == "ok"
    assert health["commit"] == repo.ledger.head()
    assert health["count"] == len(FACTS)
    assert health["modelId"] and health["schemaVersion"] == SCHEMA_VERSION
    assert repo.status()["index"]["state"] == "ok"


@pytest.mark.parametrize(
    "query",
    [
        'say "hello',
        "title:foo status:active",
        "((unbalanced (parens",
        "what's up?",
        "AND OR NOT",
        "*",
        "-",
        "+:^~",
        "path:/etc/passwd",
        "a" * 10_000,
        "release " * 3000,
        "\x00\x01 nul",
        "日本語のクエリ",
        "🙂🙂",
    ],
)
def test_hostile_queries_behave(repo: Memory, query: str) -> None:
    result = repo.recall(query, top_k=3)
    assert len(result.hits) <= 3
    for h in result.hits:
        assert h.status == "active"


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_a_usage_error(repo: Memory, query: str) -> None:
    with pytest.raises(UsageError, match="empty"):
        repo.recall(query)


def test_bad_arguments_name_the_field(repo: Memory) -> None:
    with pytest.raises(ValidationError, match="top_k"):
        repo.recall("x", top_k=0)
    with pytest.raises(ValidationError, match="namespace"):
        repo.recall("x", namespace="../etc")
    with pytest.raises(ValidationError, match="category"):
        repo.recall("x", category="nope")


def test_superseded_excluded_by_default_and_returned_when_asked(fresh: Memory) -> None:
    old = fresh.store("The deploy window is Friday afternoon", category="decision").record
    new = fresh.store("The deploy window moved to Wednesday morning", category="decision").record
    fresh.update(old.id, {"status": "superseded", "supersededBy": new.id})
    result = fresh.recall("deploy window", top_k=5)
    assert old.id not in _ids(result) and new.id in _ids(result)
    status_stage = next(s for s in result.stages if s.name == "status-active")
    assert status_stage.considered == status_stage.admitted + 1 and "superseded" in status_stage.reason
    asked = fresh.recall("deploy window", top_k=5, include_inactive=True)
    hit = next(h for h in asked.hits if h.id == old.id)
    assert hit.status == "superseded" and hit.terms.status < 0
    assert _ids(asked).index(new.id) < _ids(asked).index(old.id)
    only = fresh.recall("deploy window", top_k=5, statuses=["superseded"])
    assert _ids(only) == [old.id]
    fresh.forget(new.id)
    assert new.id not in _ids(fresh.recall("deploy window", top_k=5))


def test_committed_edit_delete_and_rename_are_reflected(fresh: Memory) -> None:
    rec = fresh.store("The office plant is a ficus named Gerald", category="fact").record
    assert fresh.recall("Gerald ficus", top_k=1).hits[0].id == rec.id
    # A hand edit committed with plain git: the next recall catches up from the diff.
    path = fresh.root / rec.path
    path.write_text(path.read_text().replace("Gerald", "Bartholomew"), encoding="utf-8")
    _git(fresh, "commit", "-q", "-am", "edit by hand")
    assert fresh.index.health(fresh.ledger).state == "behind"  # healthy: caught up from git's diff
    result = fresh.recall("Bartholomew", top_k=1)
    assert result.index["action"] == "catch-up"
    assert result.hits[0].id == rec.id and "Bartholomew" in result.hits[0].content
    assert not any("Gerald" in h.content for h in fresh.recall("Gerald ficus", top_k=5).hits)
    # Rename: the same memory under its new path.
    _git(fresh, "mv", rec.path, "facts/office-plant.md")
    _git(fresh, "commit", "-q", "-m", "rename by hand")
    hit = fresh.recall("Bartholomew", top_k=1).hits[0]
    assert hit.id == rec.id and hit.path == "facts/office-plant.md"
    assert fresh.index.path_of(rec.id) == "facts/office-plant.md"
    # Delete.
    _git(fresh, "rm", "-q", "facts/office-plant.md")
    _git(fresh, "commit", "-q", "-m", "delete by hand")
    assert rec.id not in _ids(fresh.recall("Bartholomew ficus plant", top_k=5))
    assert fresh.index.path_of(rec.id) is None


def test_uncommitted_edits_via_refresh_paths_and_apply_without_commit(fresh: Memory) -> None:
    rec = fresh.store("Lunch on Fridays is at the noodle bar", category="fact").record
    fresh.recall("lunch", top_k=1)  # a complete index that knows its commit
    head = fresh.ledger.head()
    path = fresh.root / rec.path
    path.write_text(path.read_text().replace("noodle bar", "taqueria"), encoding="utf-8")
    report = fresh.index.refresh_paths(fresh.files, [rec.path])
    assert report.changed == 1
    assert fresh.index.manifest().commit == head  # commit=None leaves the recorded commit alone
    assert "taqueria" in fresh.recall("taqueria lunch", top_k=1).hits[0].content
    path.unlink()
    fresh.index.refresh_paths(fresh.files, [rec.path])
    assert rec.id not in _ids(fresh.recall("taqueria lunch", top_k=5))
    # A malformed file is dropped from the index and reported, never a crash.
    bad = fresh.root / "facts" / "broken.md"
    bad.write_text("---\nstatus: [unclosed\n---\nbody\n", encoding="utf-8")
    report = fresh.index.refresh_paths(fresh.files, ["facts/broken.md"])
    assert report.problems and "broken.md" in report.problems[0]


def test_deleting_state_dir_rebuilds_transparently(fresh: Memory) -> None:
    fresh.recall("tabs", top_k=1)
    fresh.close()
    shutil.rmtree(fresh.root / ".remnic")
    memory = Memory.open(settings=fresh.settings)
    assert memory.index.health(memory.ledger).state == "missing"
    assert memory.index.find_by_hash("default", "sha256:x") is None  # no rebuild from a look-up
    assert read_current(memory.root / ".remnic" / "index") is None
    result = memory.recall("tabs or spaces", top_k=1)
    assert result.index["action"] == "rebuild"
    assert "tabs" in result.hits[0].content
    assert memory.index.health(memory.ledger).state == "ok"
    memory.close()


def test_corrupt_catalog_and_interrupted_write_are_rebuilt(fresh: Memory) -> None:
    fresh.recall("tabs", top_k=1)
    build = read_current(fresh.root / ".remnic" / "index")
    fresh.close()
    catalog = fresh.root / ".remnic" / "index" / build / "catalog.sqlite"
    for side in ("-wal", "-shm"):
        Path(str(catalog) + side).unlink(missing_ok=True)
    catalog.write_bytes(b"this is not a database" * 100)
    memory = Memory.open(settings=fresh.settings)
    assert memory.index.health(memory.ledger).state == "corrupt"
    assert memory.recall("tabs or spaces", top_k=1).index["action"] == "rebuild"
    # A writer that died between the tantivy commit and the catalog commit leaves ``pending``.
    build = read_current(memory.root / ".remnic" / "index")
    conn = sqlite3.connect(memory.root / ".remnic" / "index" / build / "catalog.sqlite")
    conn.execute("UPDATE meta SET value = '999999999:0' WHERE key = 'pending'")
    conn.commit()
    conn.close()
    memory.close()
    memory = Memory.open(settings=fresh.settings)
    health = memory.index.health(memory.ledger)
    assert health.state == "corrupt" and "interrupted" in health.detail
    result = memory.recall("tabs or spaces", top_k=1)
    assert result.index["action"] == "rebuild" and "tabs" in result.hits[0].content
    memory.close()


def test_model_change_triggers_reembedding(fresh: Memory) -> None:
    fresh.recall("tabs", top_k=1)
    fresh.close()
    other = settings_for(fresh.root, embed={"model_id": "minilm-renamed-for-test"})
    memory = Memory.open(settings=other)
    health = memory.index.health(memory.ledger)
    assert health.state == "model-mismatch"
    result = memory.recall("tabs or spaces", top_k=1)
    assert result.index["action"] == "rebuild" and result.index["embedded"] > 0
    assert memory.index.health(memory.ledger).to_dict()["modelId"] == "minilm-renamed-for-test"
    memory.close()


def test_index_setting_change_rebuilds(fresh: Memory) -> None:
    fresh.recall("tabs", top_k=1)
    memory = Memory.open(settings=settings_for(fresh.root, recall={"neighbor_window": 1}))
    assert memory.index.health(memory.ledger).state == "stale"
    assert memory.recall("tabs", top_k=1).index["action"] == "rebuild"
    memory.close()


def test_another_writer_is_noticed_by_a_reader(fresh: Memory) -> None:
    reader = Memory.open(settings=fresh.settings)
    reader.recall("tabs", top_k=1)
    gen = reader.index.manifest().generation
    # A second facade (its own index object and snapshot), as another process would have.
    with Memory.open(settings=fresh.settings) as writer:
        rec = writer.store("The espresso machine descaling is on the first of the month", category="procedure").record
    result = reader.recall("espresso descaling", top_k=1)
    assert result.hits[0].id == rec.id and result.index["action"] == "reloaded"
    assert reader.index.manifest().generation > gen
    reader.close()


def test_a_real_second_process_writes_and_the_reader_sees_it(fresh: Memory) -> None:
    fresh.recall("tabs", top_k=1)
    env = {**os.environ, "REMNIC_MEMORY_DIR": str(fresh.root)}
    out = subprocess.run(
        [sys.executable, "-m", "remnic", "store", "Quarterly planning happens in the loft room", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    hit = fresh.recall("quarterly planning loft", top_k=1).hits[0]
    assert "loft room" in hit.content


def test_namespaces_and_categories_scope_recall(fresh: Memory) -> None:
    work = fresh.store("The release checklist lives in the wiki", category="procedure", namespace="work").record
    assert work.id not in _ids(fresh.recall("release checklist wiki", top_k=5, namespace="default"))
    assert _ids(fresh.recall("release checklist wiki", top_k=5, namespace="work")) == [work.id]
    assert work.id in _ids(fresh.recall("release checklist wiki", top_k=5))
    result = fresh.recall("release checklist wiki", top_k=5, category="preference")
    assert all(h.category == "preference" for h in result.hits)
    assert any(s.name == "category-scope" for s in result.stages)


def test_budget_drops_what_does_not_fit(repo: Memory) -> None:
    full = repo.recall("release tabs vault ticket", top_k=5, budget_chars=0)
    assert len(full.hits) >= 3
    small = repo.recall("release tabs vault ticket", top_k=5, budget_chars=60)
    assert small.budget_used <= 60 and 1 <= len(small.hits) < len(full.hits)
    assert next(s for s in small.stages if s.name == "budget-fit").admitted == len(small.hits)


def test_search_index_standalone_has_no_side_effects_on_lookup(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    Memory.init(root, settings=settings_for(root)).close()
    shutil.rmtree(root / ".remnic" / "index")  # init built an empty one
    index = SearchIndex(settings_for(root))
    assert index.find_by_hash("default", "sha256:abc") is None
    assert index.path_of("mem_x") is None
    assert index.health().state == "missing"
    assert not (root / ".remnic" / "index").exists()
    index.close()


def _long_note(topic: str, n: int, tail: str) -> str:
    """A markdown note of about n characters: headed sections of plain paragraphs, ``tail`` near its end."""
    import random

    rng = random.Random(topic)
    words = [
        "budget",
        "meeting",
        "roadmap",
        "customer",
        "invoice",
        "design",
        "review",
        "garden",
        "kitchen",
        "travel",
        "train",
        "museum",
        "library",
        "weather",
        "harbour",
        "market",
        "coffee",
        "bicycle",
        "mountain",
        "river",
        "forest",
        "schedule",
        "project",
        "office",
    ]
    parts = [f"# {topic}"]
    section = 0
    while sum(len(p) + 2 for p in parts) < n - len(tail) - 60:
        if len(parts) % 5 == 1:
            section += 1
            parts.append(f"## Part {section}")
        sentences = [
            " ".join(rng.choice(words) for _ in range(rng.randint(8, 16))).capitalize() + "." for _ in range(5)
        ]
        parts.append(" ".join(sentences))
    parts.append(tail)
    parts.append("Closing words about the " + topic.lower() + ".")
    return "\n\n".join(parts)


def test_a_long_note_is_found_by_a_phrase_near_its_end_and_trimmed_not_dropped(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    memory = Memory.init(root, settings=settings_for(root))
    tail = "The lighthouse keeper repaints the crimson door every April with marine varnish."
    note = _long_note("Harbour town notes", 12_000, tail)
    assert 11_800 <= len(note) <= 12_400 and note.index(tail) > 11_000
    long = memory.store(note, category="fact")
    other = memory.store(
        _long_note("Office handbook", 12_000, "Printer paper lives in the blue cabinet."), category="fact"
    )
    memory.store("The harbour market opens at six on Saturdays.", category="fact")
    result = memory.recall("who repaints the crimson lighthouse door?", xray=True)
    assert result.hits and result.hits[0].id == long.id
    hit = result.hits[0]
    # The 12,000-character note does not fit the 8,192-character budget: it is trimmed to its best
    # passages (the one holding the phrase first), not dropped.
    assert hit.trimmed and tail in hit.content and len(hit.content) <= result.budget_chars
    assert hit.content_chars == len(note) and result.budget_used <= result.budget_chars
    best = hit.passages[0]
    assert best["start"] <= note.index(tail) < best["end"]
    budget = next(s for s in result.stages if s.name == "budget-fit")
    assert "trimmed to their best passages" in budget.reason
    reason = result.xray.results[0].provenance.retrieval_reason
    assert "best passage §Part" in reason and f"chars {best['start']}-{best['end']}" in reason
    # Matches that are all long still come back (trimmed), never an empty result.
    both = memory.recall("crimson door printer paper cabinet", top_k=2)
    assert {h.id for h in both.hits} == {long.id, other.id}
    assert all(h.trimmed for h in both.hits) and both.budget_used <= both.budget_chars
    memory.close()


def test_long_notes_are_indexed_as_passages_within_the_model_window() -> None:
    from remnic.index import text as T

    note = _long_note("Passages", 12_000, "A tail sentence.")
    rules = T.TextRules()
    plan = T.chunk_plan(note, "Passages", rules)
    assert len(plan.passages) >= 12
    assert all(p.end - p.start <= rules.passage_chars for p in plan.passages)
    assert all(len(t) <= rules.passage_chars + 40 for t in plan.texts)  # + the carried subject
    assert plan.passages[-1].end >= note.index("A tail sentence.")
    assert {p.heading for p in plan.passages} >= {"Part 1", "Part 2"}
    assert sorted(plan.passage_of) == plan.passage_of and len(plan.passage_of) == len(plan.texts)


EPISODE = [
    "I adopted a grey cat named Bailey last spring.",
    "My sister Mia lives in Porto and works as a nurse.",
    "I started learning the cello in January.",
    "Our book club meets on the first Monday of each month.",
    "I ran my first half marathon in Lisbon in 2022.",
]


def test_observed_facts_take_the_mean_of_their_window_whatever_the_setting(tmp_path: Path) -> None:
    """An observed fact's context vector is the mean of its window's sentence vectors, which its flush
    embedded already: indexing the facts runs the model for their vocabulary only."""
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:  # recall.contextVectors: passage
        messages = [
            {"role": "user", "speaker": "Ana", "content": text, "turnId": f"u-{i}"} for i, text in enumerate(EPISODE, 1)
        ]
        memory.observe("s1", messages, flush=True)
        memory.settle_index()
        with sqlite3.connect(root / ".remnic" / "embeddings.sqlite") as db:
            (vectors,) = db.execute("SELECT count(*) FROM embeddings").fetchone()
        with memory.index.lock:
            memory.index.view()
            words = len(memory.index.vocab())
        facts = len(memory.list())
        assert facts >= 4 and vectors - words == facts  # one sentence each, no passage
        hit = memory.recall("Ana's cat Bailey", top_k=2).hits[0]
        assert "Bailey" in hit.content and hit.signals["contextCosine"] != hit.signals["chunkCosine"]


@pytest.mark.parametrize("mode", ["passage", "mean"])
def test_context_vectors_mean_embeds_no_passage(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root, recall={"context_vectors": mode})) as memory:
        turns = [
            {"content": text, "category": "moment", "sourceTurnId": f"D1:{i}", "source": "chat"}
            for i, text in enumerate(EPISODE, 1)
        ]
        memory.import_records(turns)  # a conversation's turns, imported (observed facts are below)
        memory.settle_index()
        assert memory.index.health(memory.ledger).state == "ok"
        with sqlite3.connect(root / ".remnic" / "embeddings.sqlite") as db:
            (vectors,) = db.execute("SELECT count(*) FROM embeddings").fetchone()
        with memory.index.lock:
            memory.index.view()
            words = len(memory.index.vocab())  # the vocabulary's words go through the cache too
        # "passage" runs the model once more per memory (its neighbours' text); "mean" reuses the sentences.
        assert words > 0 and vectors - words == (len(EPISODE) if mode == "mean" else 2 * len(EPISODE))
        hit = memory.recall("Ana's cat Bailey", top_k=1).hits[0]
        assert "Bailey" in hit.content
    if mode == "mean":
        with Memory.open(settings=settings_for(root)) as memory:  # back to the default: a rebuild
            assert memory.index.health(memory.ledger).state == "stale"
