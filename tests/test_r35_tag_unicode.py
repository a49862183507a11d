"""Tags compare in Unicode NFC: "café" typed precomposed (NFC) or as e + a combining accent (NFD) is one tag.

Every write (store, update, import) stores tags in NFC, one of each; every tag filter (recall on every
surface, ``list --tag``, ``GET memories?tag=``) compares tags in NFC, so a file written by hand in NFD
is found by either spelling and is never rewritten to normalise it. ``store --supersedes`` takes the old
memory's tags as a reader takes them, ``tag:`` included.

One real repository (module scope), driven through the service, the in-process API and the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.memfile.validate import normalize_tags
from remnic.server.api import Api
from remnic.service.memory import Memory

NFC = "caf\u00e9"
NFD = "cafe\u0301"
HAND = f"---\nid: mem_handnfd\ncategory: fact\ntags: [{NFD}]\n---\nGecko notes written by hand\n"
HAND_BODY = "---\nid: mem_handbody\ncategory: fact\n---\nGecko notes with an inline tag #" + NFD + "-latte\n"
BOTH = f"---\nid: mem_handboth\ncategory: fact\ntags: [{NFD}, {NFC}]\n---\nGecko notes tagged twice\n"


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    base = tmp_path_factory.mktemp("r35nfc")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(base / "home"))
        root = base / "mem"
        mem = Memory.init(root, settings=settings_for(root))
        for name, text in (("hand-nfd", HAND), ("hand-body", HAND_BODY), ("hand-both", BOTH)):
            (root / "facts" / f"{name}.md").write_text(text, encoding="utf-8")
        mem.sync()
        yield mem
        mem.close()


def _file_tags(mem: Memory, memory_id: str) -> list[str]:
    return list(mem.get(memory_id).frontmatter["tags"])


def test_a_write_stores_tags_in_nfc_and_one_of_each() -> None:
    assert normalize_tags([NFD, NFC]) == ([NFC], [])
    assert normalize_tags(f"{NFD}, Caf\u00e9 ,ops") == ([NFC, "ops"], [])


def test_store_update_and_import_write_nfc_tags(memory: Memory, tmp_path: Path) -> None:
    stored = memory.store("Gecko notes stored two ways", tags=[NFD, NFC]).id
    assert _file_tags(memory, stored) == [NFC]
    assert NFD not in (memory.root / memory.get(stored).path).read_text(encoding="utf-8")
    updated = memory.store("Gecko notes updated later").id
    memory.update(updated, {"tags": [NFD, "ops"]})
    assert _file_tags(memory, updated) == [NFC, "ops"]
    line = {"content": "Gecko notes imported from a file", "tags": [NFD, NFC]}
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert run_cli("import", str(jsonl), "--memory-dir", str(memory.root)).code == 0
    memory.sync()
    imported = [r for r in memory.list() if r.content == line["content"]]
    assert [r.frontmatter["tags"] for r in imported] == [[NFC]]


def test_a_hand_written_nfd_tag_is_found_by_either_spelling_and_left_as_written(memory: Memory) -> None:
    before = (memory.root / "facts" / "hand-nfd.md").read_bytes()
    for spelling in (NFC, NFD, "#CAF\u00c9"):
        assert "mem_handnfd" in {h.id for h in memory.recall("gecko notes", top_k=10, tags=[spelling]).hits}
        assert "mem_handnfd" in {r.id for r in memory.list(tag=spelling)}
    both = memory.recall("gecko notes", top_k=10, tags=[NFC, NFD], tag_match="all")
    assert "mem_handnfd" in {h.id for h in both.hits}
    # A body #tag typed decomposed is the whole word, not cut at the accent.
    assert memory.get("mem_handbody").tags == [f"{NFC}-latte"]
    assert "mem_handbody" in {r.id for r in memory.list(tag=f"{NFD}-latte")}
    assert (memory.root / "facts" / "hand-nfd.md").read_bytes() == before


def test_a_file_holding_both_spellings_reads_as_one_tag(memory: Memory) -> None:
    assert memory.get("mem_handboth").tags == [NFD]


def test_http_and_cli_tag_filters_match_across_spellings(memory: Memory) -> None:
    api = Api(memory)
    recalled = api.call("recall", "alice", {"query": "gecko notes", "tags": [NFC], "topK": 10}).body
    assert "mem_handnfd" in {r["id"] for r in recalled["results"]}
    listed = api.call("memories_list", "alice", {"tag": NFC, "limit": 200}, from_query=True).body
    assert "mem_handnfd" in {m["id"] for m in listed["memories"]}
    out = run_cli("list", "--tag", NFC, "--memory-dir", str(memory.root))
    assert out.code == 0 and "mem_handnfd" in out.out


def test_store_supersedes_takes_the_tags_of_a_tag_key(memory: Memory) -> None:
    root = memory.root
    text = "---\nid: mem_tagkey\ncategory: decision\ntag: ops, release\n---\nWe release on Tuesdays\n"
    (root / "decisions" / "tag-key.md").write_text(text, encoding="utf-8")
    memory.sync()
    new = memory.store("We release on Wednesdays now", extra={"supersedes": "mem_tagkey"}).record
    assert new.category == "decision"
    assert new.frontmatter["tags"] == ["ops", "release"]
    assert "tag" not in new.frontmatter


def test_summary_tags_and_the_audit_key_treat_the_two_spellings_as_one() -> None:
    import unicodedata

    from remnic.recall.audit import options_key
    from remnic.server.compat import summary_tags

    decomposed = unicodedata.normalize("NFD", "café")
    assert summary_tags({"tags": ["café", decomposed, "ops"]}) == ["café", "ops"]
    assert options_key(top_k=5, budget_chars=100, tags=["café"]) == options_key(
        top_k=5, budget_chars=100, tags=[decomposed]
    )
