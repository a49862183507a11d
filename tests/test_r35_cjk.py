"""Chinese and Japanese words inside an unspaced sentence are BM25 terms: runs of CJK characters are
indexed and queried as overlapping bigrams, and a run's characters are indexed too (a one-character
word). Observe splits a CJK sentence from the one before it. Real repository, real index, real packaged model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from remnic.config import settings_for
from remnic.index.bm25 import _analyzer, analyze, query_terms
from remnic.index.manifest import SCHEMA_VERSION
from remnic.index.text import cjk_bigrams
from remnic.memfile.model import MemoryRecord
from remnic.observe.text import split_sentences
from remnic.recall.fallback import scan_recall
from remnic.recall.ladder import token_overlap
from remnic.recall.pipeline import RecallOptions
from remnic.service.memory import Memory

DATABASE = "团队决定下个月迁移到新的数据库服务器"  # 18 characters: 54 bytes, once past the 40-byte token limit
RELEASE = "我们每周二发布新版本"
TOKYO = "東京オフィスは金曜日に閉まります"
LONG = "会议记录显示我们需要在第三季度之前完成所有客户数据的备份工作并且通知每一位相关负责人员"
ENGLISH = "The database server migration is next month"
CAT = "我家的猫叫小白，它很可爱"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("cjk") / "mem"
    memory = Memory.init(root, settings=settings_for(root))
    for text in (DATABASE, RELEASE, TOKYO, LONG, "🚀🚀🚀", "x", ENGLISH, CAT):
        memory.store(text)
    yield memory
    memory.close()


def _top(memory: Memory, query: str) -> tuple[str, int | None, float]:
    hit = memory.recall(query, top_k=3).hits[0]
    return hit.content.strip(), hit.signals["bm25Rank"], hit.terms.bm25


@pytest.mark.parametrize(
    ("query", "memory"),
    [("发布", RELEASE), ("数据库", DATABASE), ("金曜日", TOKYO), ("オフィス", TOKYO), ("备份", LONG)],
    ids=["zh-release", "zh-database", "ja-friday", "ja-office", "zh-long-backup"],
)
def test_a_word_inside_a_cjk_sentence_is_found_by_bm25(repo: Memory, query: str, memory: str) -> None:
    content, rank, bm25 = _top(repo, query)
    assert content == memory
    assert rank == 1 and bm25 > 0


def test_a_long_cjk_memory_has_terms_and_its_own_text_finds_it(repo: Memory) -> None:
    for text in (DATABASE, LONG):
        content, rank, bm25 = _top(repo, text)
        assert content == text and rank == 1 and bm25 > 0


def test_english_stays_as_it_was(repo: Memory) -> None:
    content, rank, _ = _top(repo, "database")
    assert content == ENGLISH and rank == 1
    # (no emoji here: a symbol is a term of its own since index schema 13, see test_r36_bm25_symbols.py)
    for text in (ENGLISH, "What did Caroline research? café naïve don't 2023-05-07", "Привет мир x"):
        assert cjk_bigrams(text) is text
        assert analyze(text) == list(_analyzer(False).analyze(text))
        assert query_terms(text) == list(dict.fromkeys(_analyzer(True).analyze(text)))


def test_bigrams_unigrams_and_mixed_text() -> None:
    assert query_terms("数据库") == ["数据", "据库"]
    assert query_terms("库") == ["库"]
    assert query_terms("Release v2 发布 on 周二") == ["releas", "v2", "发布", "周二"]
    # the index side has the run's characters too (after its bigrams); queries keep to bigrams
    assert analyze("abc数据库def") == ["abc", "数据", "据库", "def", "数", "据", "库"]
    assert query_terms(cjk_bigrams(TOKYO)) == query_terms(TOKYO)
    assert token_overlap(query_terms("数据库"), set(analyze(DATABASE))) == 1.0
    assert token_overlap(query_terms("猫"), set(analyze(CAT))) == 1.0  # the gate admits a one-character word
    assert SCHEMA_VERSION >= 12  # indexes without the runs' characters are rebuilt


def test_a_one_character_word_inside_a_cjk_sentence_is_found_by_bm25(repo: Memory) -> None:
    content, rank, bm25 = _top(repo, "猫")
    assert content == CAT and rank == 1 and bm25 > 0
    # a two-character word still ranks by its bigram: 小白 is in CAT only, though 白 alone is not rare
    content, rank, _ = _top(repo, "小白")
    assert content == CAT and rank == 1


def test_lcm_search_finds_a_one_character_word(repo: Memory) -> None:
    filler = "今日は天気が良いので散歩に行きます。" * 80
    turns = [
        {"role": "user", "content": CAT},
        {"role": "user", "content": "うちの犬は柴犬です。毎朝散歩します"},
        {"role": "user", "content": "明天会下雨吗"},
        {"role": "user", "content": filler + "猫" + filler},
    ]
    repo.observe("pets", turns, extract=False)
    for query, found in (("猫", {0, 3}), ("犬", {1}), ("雨", {2}), ("下雨", {2})):
        assert {h["turnIndex"] for h in repo.lcm_search(query, session_key="pets")} == found, query
    long = next(h for h in repo.lcm_search("猫", session_key="pets") if h["turnIndex"] == 3)
    assert "猫" in long["content"] and long["content"].startswith("…")  # the excerpt is centred on it


def test_a_cjk_sentence_is_split_from_the_english_one_before_it() -> None:
    assert split_sentences("I prefer tabs for indentation in this code. 会議は月曜日です。") == [
        "I prefer tabs for indentation in this code.",
        "会議は月曜日です。",
    ]
    assert split_sentences("我们每周一开会。下周二发布！真的吗？！ OK.") == [
        "我们每周一开会。",
        "下周二发布！",
        "真的吗？！",
        "OK.",
    ]
    assert split_sentences("会議は「月曜日です。」次は火曜。") == ["会議は「月曜日です。」", "次は火曜。"]


def test_the_file_scan_matches_a_word_inside_a_cjk_sentence() -> None:
    records = [
        MemoryRecord(path=f"facts/{n}.md", frontmatter={"id": f"mem_{n}", "category": "fact"}, body=text + "\n")
        for n, text in enumerate((DATABASE, RELEASE, TOKYO))
    ]
    settings = settings_for(Path("/nonexistent")).recall
    result = scan_recall(records, "发布", RecallOptions(), settings, reason="test")
    assert [h.id for h in result.hits] == ["mem_1"]
