"""Text in any Unicode form and script: a note saved decomposed (NFD) is found by a typed (NFC) query and
by its NFC file name; Turkish İ/I/ı fold alike; slugs keep other scripts' words and their marks and are no
Windows device name; commit subjects are cut where a character ends; tables pad by display width; European
dates are read. Real repository, real tantivy index, the packaged model."""

from __future__ import annotations

import subprocess
import unicodedata
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from remnic.cli._common import table
from remnic.config import settings_for
from remnic.index import dates as D
from remnic.index.bm25 import analyze, query_terms
from remnic.index.manifest import SCHEMA_VERSION
from remnic.index.text import normal_form
from remnic.memfile.graphemes import clip, display_width
from remnic.memfile.model import slugify
from remnic.memfile.values import tag_key
from remnic.service.memory import Memory


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


NFD_NAME = nfd("facts/Übergabe Schlüssel.md")
NFC_NAME = "facts/Übergabe Schlüssel.md"
KOELN = "Björn übernimmt die Übergabe der Schlüssel für das Büro in Köln."
ZUERICH = "Jörg übernimmt die Übergabe der Schlüssel für das Büro in Zürich."


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("i18n") / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    (root / "facts").mkdir(exist_ok=True)
    (root / NFD_NAME).write_text(nfd(KOELN) + "\n", encoding="utf-8")
    (root / "facts/plain.md").write_text(ZUERICH + "\n", encoding="utf-8")
    memory.sync()
    memory.store("İzmir ofisi kapandı", tags=["İstanbul"])
    memory.store("Ankara ofisi açıldı", tags=["ılık"])
    memory.store("DİYARBAKIR şubesi büyüyor")
    yield memory
    memory.close()


def _bm25_hit(memory: Memory, query: str) -> str:
    hit = memory.recall(query, top_k=3).hits[0]
    assert hit.signals["bm25Rank"] == 1 and hit.terms.bm25 > 0, (query, hit.signals)
    return hit.content.strip()


@pytest.mark.parametrize("query", ["Köln", nfd("Köln"), "Schlüssel Köln", "koln"])
def test_an_nfd_note_is_found_by_bm25_in_either_form(repo: Memory, query: str) -> None:
    assert unicodedata.normalize("NFC", _bm25_hit(repo, query)) == KOELN


def test_nfc_text_is_found_by_an_nfd_query(repo: Memory) -> None:
    assert _bm25_hit(repo, nfd("Zürich")) == ZUERICH


@pytest.mark.parametrize("query", ["izmir", "İZMİR", "IZMIR", "İzmir"])
def test_turkish_dotted_i_matches_every_spelling(repo: Memory, query: str) -> None:
    assert _bm25_hit(repo, query) == "İzmir ofisi kapandı"


def test_diyarbakir_lowercase_finds_its_note_first(repo: Memory) -> None:
    assert _bm25_hit(repo, "diyarbakır") == "DİYARBAKIR şubesi büyüyor"


def test_tag_filters_fold_turkish_i(repo: Memory) -> None:
    assert tag_key("İstanbul") == tag_key("istanbul") == tag_key("ISTANBUL")
    assert tag_key("ılık") == tag_key("ILIK")
    assert [r.content for r in repo.search(tag="istanbul")[0]] == ["İzmir ofisi kapandı"]
    assert [r.content for r in repo.search(tag="ILIK")[0]] == ["Ankara ofisi açıldı"]


@pytest.mark.parametrize("q", ["Köln", nfd("Köln"), "KÖLN", "izmir"])
def test_the_term_filter_compares_nfc_and_folded(repo: Memory, q: str) -> None:
    found, total = repo.search(q)
    assert total == 1 and found[0].content.strip() in (nfd(KOELN), "İzmir ofisi kapandı")


def test_history_and_update_take_the_nfc_name_of_an_nfd_file(memory: Memory) -> None:
    (memory.root / "facts").mkdir(exist_ok=True)
    (memory.root / NFD_NAME).write_text(nfd(KOELN) + "\n", encoding="utf-8")
    memory.sync()
    repo = memory
    assert repo.resolve(NFC_NAME) == NFD_NAME
    assert repo.versions(NFC_NAME)
    assert repo.timeline(NFC_NAME)
    repo.update(NFC_NAME, {"tags": ["x"]})
    assert repo.get(NFC_NAME).tags == ["x"] and repo.get(NFC_NAME).path == NFD_NAME
    assert len(repo.versions(NFC_NAME)) == 2


def test_store_keeps_the_given_form_and_indexes_nfc(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as memory:
        written = memory.store(nfd("Résumé für Jürgen"))
        assert nfd("Résumé für Jürgen") in (root / written.records[0].path).read_text(encoding="utf-8")
        assert _bm25_hit(memory, "Résumé") == nfd("Résumé für Jürgen")


def test_ascii_and_nfc_text_analyses_as_before() -> None:
    for text in ("What did Caroline research? café naïve 2023-05-07 🚀", "Привет мир", "東京オフィス", "straße"):
        assert normal_form(text) is text or normal_form(text) == text
    assert analyze(nfd("Köln")) == analyze("Köln") == ["koln"]
    assert query_terms("ｵﾌｨｽ") == query_terms("オフィス")
    assert SCHEMA_VERSION >= 15  # indexes analysed before the normal form are rebuilt


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("दिल्ली कार्यालय में राहुल सर्वर का प्रबंधन करता है", "दिल्ली-कार्यालय-में-राहुल"),
        ("Встреча в 10 часов", "встреча-в-10-часов"),
        ("日本 Tokyo", "日本-tokyo"),
        ("Юрий Гагарин is allergic to peanuts.", "юрий-гагарин-is-allergic-to"),
        ("José Núñez prefers Ødegaard", "jose-nunez-prefers-odegaard"),
        ("Con", "con-1"),
        ("AUX", "aux-1"),
        ("nul", "nul-1"),
        ("COM1", "com1-1"),
        ("LPT1: drucker", "lpt1-drucker"),
        ("東京の会議は毎週火曜日に行われます", "東京の会議は毎週火曜日に行われます"),
    ],
)
def test_slugs_keep_other_scripts_and_avoid_device_names(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_a_stored_device_name_gets_a_safe_file_name(memory: Memory) -> None:
    assert memory.store("Con").records[0].path == "facts/con-1.md"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("x" * 58 + "👨\u200d👩\u200d👧 family", "x" * 58),
        ("z" * 59 + "🇵🇹 flag", "z" * 59),
        ("z" * 58 + "🇵🇹 flag", "z" * 58 + "🇵🇹"),
        ("y" * 59 + nfd("é"), "y" * 59),
        ("a" * 59 + "❤\ufe0f", "a" * 59),
    ],
)
def test_clip_cuts_where_a_character_ends(text: str, kept: str) -> None:
    assert clip(text, 60) == kept


def test_commit_subject_keeps_a_whole_emoji(memory: Memory) -> None:
    memory.store("x" * 58 + "👨\u200d👩\u200d👧 family")
    subject = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=memory.root, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert subject == "remnic store: " + "x" * 58


def test_tables_pad_by_display_width() -> None:
    out = table([["facts/東京.md", "a"], [nfd("facts/Café.md"), "b"], ["facts/x.md", "c"]], ["PATH", "TEXT"])
    lines = out.splitlines()
    assert {display_width(line[: line.rindex(" ") + 1]) for line in lines} == {len("facts/東京.md") + 2 + 2}
    assert display_width("東京") == 4 and display_width(nfd("é")) == 1 and display_width("👨\u200d👩\u200d👧") == 2


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Vertrag endet am 28.11.2026", date(2026, 11, 28)),
        ("am 3. April 2027", date(2027, 4, 3)),
        ("am 28. März 2026", date(2026, 3, 28)),
        (nfd("am 28. März 2026"), date(2026, 3, 28)),
        ("el 3 de abril de 2027", date(2027, 4, 3)),
        ("le 1er mars 2027", date(2027, 3, 1)),
    ],
)
def test_european_dates_are_read(text: str, day: date) -> None:
    spans = D.find_dates(text, date(2026, 11, 28))
    assert [(s.start, s.end) for s in spans] == [(day, day)]


@pytest.mark.parametrize("text", ["Mars 2030 mission", "version 1.2.2026.4", "see 4.12.", "03/04/2027"])
def test_no_date_is_guessed(text: str) -> None:
    assert D.find_dates(text, date(2026, 11, 28)) == []
