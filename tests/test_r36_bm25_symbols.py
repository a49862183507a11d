"""Emoji and other symbols (Unicode So) are BM25 terms (h6 M4): `remnic query "🚀"` ranks the memories
holding 🚀 (in their text or a tag) first, by BM25, and the LCM search finds them too. Text without a
symbol analyses exactly as before (so no ranking of it changes). Real repository, index and model."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from remnic.config import settings_for
from remnic.index.bm25 import Bm25Index, _analyzer, analyze, query_terms
from remnic.index.manifest import SCHEMA_VERSION
from remnic.index.text import _CJK_RUN_RE, _SYMBOL_CLASS, cjk_bigrams, cjk_unigrams, symbols
from remnic.observe.lcm.index import VERSION as LCM_VERSION
from remnic.service.memory import Memory

ROCKET = "Bug #25: the importer crashed on emoji 🚀 in titles"
TAGGED = "Rocket notes, filed under their tag only"
COFFEE = "Café au lait every morning ☕"
PARTY = "Launch party was a success 🎉🎉"
DB = "团队决定下个月迁移到新的数据库服务器"
FLAG = "Holiday in Lisbon 🇵🇹 next spring"

# No symbol in any of these (the currency, maths and modifier signs are Sc, Sm and Sk, not So).
PLAIN = [
    "The database server migration is next month; we'll ship v2.3 on 2023-05-07 (don't forget!)",
    "Café naïve façade Größe résumé coöperate São Paulo Zürich Ørsted Łódź",
    "Привет мир, как дела? Москва — столица России. Ёлка",
    "Καλημέρα κόσμε, η Αθήνα είναι η πρωτεύουσα της Ελλάδας",
    "مرحبا بالعالم هذا اختبار للنظام العربي",
    "团队决定下个月迁移到新的数据库服务器 東京オフィスは金曜日に閉まります 한국어 문장입니다",
    "Prices: $5 + €3 = £8 ^ ~ | < > ¬ ± × ÷ → ¥ “quotes” «guillemets» … • § e\u0301 NBSP\u00a0here",
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("symbols") / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    for text, tags in (
        (ROCKET, None),
        (TAGGED, ["🚀rocket"]),
        (COFFEE, None),
        (PARTY, None),
        (DB, None),
        (FLAG, None),
        ("Deploys need two approvals", None),
    ):
        memory.store(text, tags=tags)
    yield memory
    memory.close()


def test_symbols_are_single_terms() -> None:
    assert symbols("launch 🚀 party ✨") == ["🚀", "✨"]
    assert symbols("👍🏽 and ❤️") == ["👍", "❤"]  # skin tones and variation selectors are no symbols
    assert symbols("🇵🇹🇪🇸 flags") == ["🇵🇹", "🇪🇸"]  # a flag is its pair of regional indicators
    assert symbols("25°C ©2024 ™") == ["°", "©", "™"]
    assert symbols("plain ascii $ + ^ ~") == [] and symbols(DB) == []
    assert query_terms("🚀") == ["🚀"] and query_terms("the 🚀 launch") == ["launch", "🚀"]
    assert analyze("🚀rocket") == ["rocket", "🚀"]
    assert SCHEMA_VERSION >= 13 and LCM_VERSION >= 6  # indexes without symbols are rebuilt


def test_the_symbol_class_is_unicode_so_and_apart_from_cjk() -> None:
    chars = set(re.findall(f"[{_SYMBOL_CLASS}]", "".join(map(chr, range(0x110000)))))
    assert all(unicodedata.category(c) == "So" for c in chars)
    if unicodedata.unidata_version == "14.0.0":  # the class is written out from Unicode 14 (So ends at 0x1fbff)
        assert len(chars) == sum(1 for c in range(0x20000) if unicodedata.category(chr(c)) == "So")
    assert not any(_CJK_RUN_RE.match(c) for c in chars)


@pytest.mark.parametrize("language", ["english", "russian", "greek", "arabic", "none"])
def test_text_without_symbols_analyses_as_before(language: str) -> None:
    for text in PLAIN:
        assert symbols(text) == []
        words = list(_analyzer(False, language).analyze(cjk_bigrams(text)))
        chars = list(_analyzer(False, language).analyze(cjk_unigrams(text))) if cjk_unigrams(text) else []
        assert analyze(text, language=language) == words + chars
        stopped = list(_analyzer(True, language).analyze(cjk_bigrams(text))) or words
        assert query_terms(text, language=language) == list(dict.fromkeys(stopped))


def test_an_emoji_query_ranks_the_memories_holding_it_first_by_bm25(repo: Memory) -> None:
    result = repo.recall("🚀", top_k=10)
    assert result.terms == ["🚀"]
    assert result.hits[0].content.strip() == ROCKET and result.hits[0].signals["bm25Rank"] == 1
    by_words = {h.content.strip(): h.signals["bm25Rank"] for h in result.hits if h.signals["bm25"]}
    assert by_words == {ROCKET: 1, TAGGED: 2}  # its text, then its tag; the rest only by the vectors
    coffee = repo.recall("☕", top_k=3).hits[0]
    assert coffee.content.strip() == COFFEE and coffee.signals["bm25Rank"] == 1
    flag = repo.recall("🇵🇹", top_k=3).hits[0]
    assert flag.content.strip() == FLAG and flag.signals["bm25Rank"] == 1
    assert repo.recall("数据库", top_k=1).hits[0].content.strip() == DB  # CJK as before


def test_a_passage_counts_its_symbols_once(tmp_path: Path) -> None:
    """A long memory's passage is scored from its stored text: its symbols count once, as the
    index counts them (the symbols' own value is stored empty)."""
    index = Bm25Index(tmp_path / "t", create=True)
    body = "launch day 🚀 went well ✨ 数据库"
    with index.writer() as w:
        fields = {"path": "a.md", "namespace": "default", "category": "fact", "status": "active"}
        w.add({**fields, "body": body, "passages": [body, "other words"]})
    found = index.search_passages(["🚀"], 5)
    assert [(p, n) for p, n, _ in found] == [("a.md", 0)]
    assert sorted(index.tokens(found[0][2])) == sorted(analyze(body))
    q = __import__("tantivy").Query.term_query(index.schema, "body", "🚀")
    hit = index.searcher.search(q, 1).hits[0]
    explained = json.dumps(json.loads(q.explain(index.searcher, hit[1]).to_json()))
    assert f'"value": {float(len(analyze(body)))}, "description": "dl, length of field"' in explained


def test_lcm_search_finds_an_emoji(repo: Memory) -> None:
    filler = "We talked about the weather and the garden for a long while. " * 40
    turns = [
        {"role": "user", "content": "The launch went fine 🚀 yesterday"},
        {"role": "user", "content": "Coffee first ☕ then standup"},
        {"role": "user", "content": filler + "and then the rocket 🚀 emoji again. " + filler},
    ]
    repo.observe("emoji", turns, extract=False)
    assert {h["turnIndex"] for h in repo.lcm_search("🚀", session_key="emoji")} == {0, 2}
    assert {h["turnIndex"] for h in repo.lcm_search("☕", session_key="emoji")} == {1}
    long = next(h for h in repo.lcm_search("🚀", session_key="emoji") if h["turnIndex"] == 2)
    assert "🚀" in long["content"] and long["content"].startswith("…")  # the excerpt is centred on it
