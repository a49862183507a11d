"""Session 35: CJK words in the transcript archive's search, an unknown session or namespace named
by `lcm search` and `entities list`, and the audit entry's latencies apart from the index catch-up.

Real git repositories, the real tantivy indexes and the CLI in-process.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from conftest import GIT_IDENTITY, run_cli

from remnic.service.memory import Memory

CJK = [
    {"role": "user", "content": "東京です", "speaker": "Kenji"},
    {"role": "user", "content": "我们周五发布新版本", "speaker": "Li"},
    {"role": "user", "content": "田中さんは東京に引っ越しました。", "speaker": "田中太郎"},
    {"role": "user", "content": "다음 주에 서울에서 회의가 있습니다", "speaker": "Min"},
]


def _turns(memory: Memory, session: str, messages: list[dict[str, str]], namespace: str | None = None) -> None:
    memory.observe(session, messages, namespace=namespace, extract=False)


def test_a_word_inside_an_unspaced_cjk_turn_is_found(memory: Memory) -> None:
    _turns(memory, "j", CJK)
    long = "新しいデータベースサーバーへの移行は来月の第二週に予定されていますので準備をお願いします"
    _turns(memory, "long", [{"role": "user", "content": long}])
    found = {
        "東京": {0, 2},
        "发布": {1},
        "田中": {2},
        "引っ越し": {2},
        "서울": {3},
    }
    for query, turns in found.items():
        hits = memory.lcm_search(query, session_key="j")
        assert {h["turnIndex"] for h in hits} == turns, query
    # a whole sentence ranks its own turn first (its phrase is boosted over a shared word such as 東京)
    for query, turn in (("田中さんは東京に引っ越しました。", 2), ("我们周五发布新版本", 1)):
        assert memory.lcm_search(query, session_key="j")[0]["turnIndex"] == turn, query
    # a sentence of 40 characters (120 bytes) was one token over tantivy's length limit: never indexed
    assert memory.lcm_search(long)[0]["sessionKey"] == "long"
    assert memory.lcm_search("データベース")[0]["sessionKey"] == "long"
    # what a hit shows is the turn as said, not its bigrams; a CJK speaker is searchable by part of the name
    hit = memory.lcm_search("田中太郎")[0]
    assert hit["content"] == "田中さんは東京に引っ越しました。" and hit["speaker"] == "田中太郎"
    assert memory.lcm_search("太郎")[0]["turnIndex"] == 2
    # Latin text analyses as before
    _turns(memory, "en", [{"role": "user", "content": "José renamed the billing service on miércoles"}])
    assert memory.lcm_search("Jose miercoles")[0]["sessionKey"] == "en"


def test_a_long_cjk_turns_excerpt_is_centred_on_the_word(memory: Memory) -> None:
    filler = "今日は天気が良いので散歩に行きます。" * 80
    _turns(memory, "x", [{"role": "user", "content": filler + "秘密の合言葉は青い鳥です。" + filler}])
    hit = memory.lcm_search("合言葉")[0]
    assert "秘密の合言葉は青い鳥です" in hit["content"]
    assert hit["content"].startswith("…") and hit["content"].endswith("…")


def _old_index_class(tmp_path: Path, version: int) -> type:
    """The LcmIndex of an earlier index ``version``, loaded from the newest commit holding it: an index
    built by it is what an upgrade finds on disk."""
    root = Path(__file__).resolve().parents[1]
    path = "remnic/observe/lcm/index.py"
    revs = subprocess.run(
        ["git", "log", "--format=%H", "--", path], cwd=root, capture_output=True, text=True
    ).stdout.split()
    source = ""
    for rev in revs:
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, capture_output=True, text=True).stdout
        if f"VERSION = {version}\n" in text:
            source = text
            break
    assert source, f"no copy of the version-{version} LCM index in the history"
    module_path = tmp_path / f"old_lcm_index_{version}.py"
    module_path.write_text(source.replace("from .store import", "from remnic.observe.lcm.store import"))
    spec = importlib.util.spec_from_file_location(f"old_lcm_index_{version}", module_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module.LcmIndex


def test_an_index_built_before_bigrams_is_rebuilt_and_then_finds_cjk_words(memory: Memory, tmp_path: Path) -> None:
    _turns(memory, "j", CJK)
    old = _old_index_class(tmp_path, 3)(memory.root)
    old.catch_up()
    assert old.search("東京", limit=5) == []  # the old index has no term for a word inside a run
    status = memory.lcm_status()
    assert status["index"]["rebuilt"] is True and status["stats"]["totalTurns"] == 4
    assert {h["turnIndex"] for h in memory.lcm_search("東京")} == {0, 2}


def test_an_index_of_bigrams_only_is_rebuilt_and_then_finds_a_one_character_word(
    memory: Memory, tmp_path: Path
) -> None:
    _turns(memory, "cat", [{"role": "user", "content": "我家的猫叫小白"}])
    old = _old_index_class(tmp_path, 4)(memory.root)
    old.catch_up()
    assert old.search("猫", limit=5) == []  # bigrams only: no term for a one-character word
    assert memory.lcm_status()["index"]["rebuilt"] is True
    assert [h["sessionKey"] for h in memory.lcm_search("猫")] == ["cat"]


def test_lcm_search_names_an_unknown_session_or_namespace(memory: Memory) -> None:
    _turns(memory, "a", [{"role": "user", "content": "Alice owns the ledger service."}])
    _turns(memory, "w1", [{"role": "user", "content": "The work laptop is due back Friday."}], namespace="work")
    root = str(memory.root)

    def search(*args: str) -> tuple[int, str, str]:
        r = run_cli("lcm", "search", *args, "--memory-dir", root)
        return r.code, r.out, r.err

    code, out, err = search("Alice", "--session", "nosuch")
    assert code == 0 and "no archived turn matches" in out
    assert "--session 'nosuch': no session with that key is archived" in err and "w1" in err and "a" in err
    code, _, err = search("Alice", "--namespace", "nosuch")
    assert "--namespace 'nosuch': no turn is archived in that namespace" in err and "default, work" in err
    _, _, err = search("laptop", "--session", "w1", "--namespace", "default")
    assert "--session 'w1': no turn of it is archived in namespace default; it is archived in namespace work" in err
    _, _, err = search("Alice", "--session-prefix", "zz")
    assert "--session-prefix 'zz': no archived session key starts with it" in err
    as_json = run_cli("lcm", "search", "Alice", "--session", "nosuch", "--json", "--memory-dir", root).json()
    assert as_json["count"] == 0 and "nosuch" in as_json["warning"]
    # a session that exists but said nothing matching: no warning, plain "no match"
    code, out, err = search("laptop", "--session", "a")
    assert code == 0 and "no archived turn matches" in out and err == ""
    code, out, err = search("laptop", "--session", "w1")
    assert "work laptop" in out and err == ""


def test_the_audit_entry_keeps_the_recalls_own_time_apart_from_the_index_catch_up(memory: Memory) -> None:
    memory.store("Priya Shah approved the Kubernetes budget")
    memory.recall("Kubernetes budget")  # the index is current from here
    # a memory committed behind the index's back: the next recall catches the index up first
    note = memory.root / "facts" / "kubernetes-quota.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("The Kubernetes quota is forty CPUs for the budget team.\n")
    subprocess.run(["git", *GIT_IDENTITY, "add", "-A"], cwd=memory.root, check=True, capture_output=True)
    subprocess.run(["git", *GIT_IDENTITY, "commit", "-qm", "quota"], cwd=memory.root, check=True, capture_output=True)
    result = memory.recall("Kubernetes quota")
    assert result.index.get("action") == "catch-up", result.index
    entry = memory.audit_show(result.audit_id)
    assert entry["latencyMs"] == round(result.timings_ms["total"], 3)  # the footer's number
    assert entry["indexMs"] == round(result.index["seconds"] * 1000, 3) > 0
    assert entry["totalMs"] >= entry["latencyMs"] + entry["indexMs"]
    again = memory.audit_show(memory.recall("Kubernetes quota").audit_id)
    assert again["indexMs"] == 0 and again["totalMs"] >= again["latencyMs"] > 0
    shown = run_cli("audit", "show", again["id"], "--json", "--memory-dir", str(memory.root)).json()
    assert {"latencyMs", "indexMs", "totalMs"} <= set(shown)


def test_entities_list_names_a_namespace_with_no_memories(memory: Memory) -> None:
    memory.store("Priya Raman approved the pager rota.")
    head = memory.head()
    listed = run_cli("entities", "list", "--namespace", "nosuch", "--memory-dir", str(memory.root))
    assert listed.code == 0
    assert "no entities yet" not in listed.out
    assert "no entities in namespace nosuch: it holds no memories" in listed.out
    assert memory.head() == head and not list((memory.root / "entities").glob("*.md"))  # a read wrote nothing
    assert "Priya Raman" in run_cli("entities", "list", "--namespace", "default", "--memory-dir", str(memory.root)).out
    assert "--namespace 'nosuch': no memory file is in that namespace (namespaces here: default)" in listed.err
    as_json = run_cli("entities", "list", "--namespace", "nosuch", "--json", "--memory-dir", str(memory.root))
    assert json.loads(as_json.out)["warning"].startswith("--namespace 'nosuch'")
    # a namespace that holds memories naming nobody is not warned about
    memory.store("the build is green again", namespace="work")
    quiet = run_cli("entities", "list", "--namespace", "work", "--memory-dir", str(memory.root))
    assert "no entities in namespace work" in quiet.out and "holds no memories" not in quiet.out
    assert "warning" not in quiet.err
