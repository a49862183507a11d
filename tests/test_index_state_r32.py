"""Where remnic keeps its state is not what it should be (round 32, defects 4 and 8 of the verification).

- ``.remnic/index`` a file, a link to nothing, or ``index/CURRENT`` a folder: no index can be built there.
  ``reindex`` says so in one line naming the path and the cure (exit 1), ``status`` and ``doctor`` report
  it as a failure (never "the next recall builds it"), and a recall scans the files saying why, without
  trying a rebuild (or reading and embedding anything for one) first; once it is moved aside the next
  recall builds the index;
- ``.remnic`` a link to nothing: refused in one line; nothing is created where the link points (outside
  the repository);
- ``.remnic/embeddings.sqlite`` a folder: the cache is kept in memory, and doctor warns naming the cure;
- messages: doctor's index check does not say "index" twice nor repeat the embedding-model check's
  failure; the query footer of a model failure says the model is at fault and the index fine; ``status``
  says when ``recall.rerank`` names files that are not there.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.errors import RemnicError
from remnic.index.embed_cache import EmbeddingCache
from remnic.repo.files import MemoryStore
from remnic.service.memory import Memory

FACT = "The gateway cache TTL is 57 minutes"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A repository with one memory, its empty index built at init (the write leaves it: no model loads)."""
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as mem:
        mem.defer_index(build_missing=False)
        mem.store(FACT, category="fact")
    return root


def _checks(root: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    result = run_cli("doctor", "--json", "--memory-dir", str(root))
    return result.code, {c["name"]: c for c in json.loads(result.out)["checks"]}


def _index_line(root: Path) -> tuple[int, str]:
    result = run_cli("status", "--memory-dir", str(root))
    [line] = [x for x in result.out.splitlines() if x.startswith("index:")]
    return result.code, line


def _one_error_line(result: Any) -> str:
    assert result.code == 1 and "Traceback" not in result.err, result.err
    [line] = result.err.strip().splitlines()
    return str(line)


# --- defect 4: no index can be built where it belongs ---


def test_an_index_folder_that_is_a_file_is_one_clear_failure_and_recall_scans_the_files_without_a_rebuild(
    root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    index = root / ".remnic" / "index"
    shutil.rmtree(index)
    index.write_text("junk", encoding="utf-8")
    said = f"{index} is not a folder"

    line = _one_error_line(run_cli("reindex", "--memory-dir", str(root)))
    assert line.startswith(f"remnic: error: {said}") and f"(mv {index} {index}.bak)" in line
    code, status = _index_line(root)
    assert code == 1 and status.startswith(f"index: unusable ({said}") and "next recall" not in status
    code, checks = _checks(root)
    assert code == 1 and checks["index"]["status"] == "fail"
    assert checks["index"]["detail"].startswith(f"unusable: {said}") and "mv " in checks["index"]["detail"]

    scans: list[int] = []
    real_scan = MemoryStore.scan
    monkeypatch.setattr(MemoryStore, "scan", lambda self, *a, **k: scans.append(1) or real_scan(self, *a, **k))
    with Memory.open(settings=settings_for(root)) as mem, caplog.at_level(logging.WARNING):
        for n in (1, 2):
            result = mem.recall("gateway cache", xray=True)
            assert [h.content for h in result.hits] == [FACT] and result.hits[0].served_by == "recent-scan"
            assert result.index["action"] == "unavailable" and result.index["reason"].startswith(said)
            assert said in result.xray.tier_explain.tier_reason
            assert len(scans) == n  # the fallback's scan only: no rebuild read the files first
        assert "rebuilding it" not in caplog.text and "Traceback" not in caplog.text
        caplog.clear()
        mem.store("The staging cache TTL is 5 minutes", category="fact")
        mem.settle_index()
        assert f"index not updated: {said}" in caplog.text and "will catch up" not in caplog.text
    assert index.is_file()  # left as it was: the person moves it aside

    index.rename(index.with_name("index.bak"))  # the cure the message names
    with Memory.open(settings=settings_for(root)) as mem:
        result = mem.recall("gateway cache")
        assert result.index["action"] == "rebuild" and result.hits[0].served_by != "recent-scan"
    assert _index_line(root)[1].startswith("index: ok")


def test_an_index_link_to_nothing_and_a_current_folder_are_said_and_nothing_is_made_outside(
    root: Path, tmp_path: Path
) -> None:
    index = root / ".remnic" / "index"
    outside = tmp_path / "outside" / "x"
    shutil.rmtree(index)
    index.symlink_to(outside)
    line = _one_error_line(run_cli("reindex", "--memory-dir", str(root)))
    assert line.startswith(f"remnic: error: {index} is a symlink to {outside}, which does not exist")
    assert f"rm {index}" in line
    code, status = _index_line(root)
    assert code == 1 and status.startswith(f"index: unusable ({index} is a symlink")
    query = run_cli("query", "gateway", "--memory-dir", str(root))
    assert query.code == 0 and "57 minutes" in query.out and f"{index} is a symlink" in query.out
    assert not (tmp_path / "outside").exists()

    index.unlink()
    (index / "CURRENT").mkdir(parents=True)
    line = _one_error_line(run_cli("reindex", "--memory-dir", str(root)))
    assert line.startswith(f"remnic: error: {index / 'CURRENT'} is a folder") and "mv " in line
    assert _checks(root)[1]["index"]["status"] == "fail"


def test_a_current_naming_no_build_is_rebuilt_as_status_promises(root: Path) -> None:
    (root / ".remnic" / "index" / "CURRENT").write_text("build-000099-deadbeef\n", encoding="utf-8")
    code, status = _index_line(root)
    assert code == 0 and status.startswith("index: corrupt (no catalog at") and "the next recall rebuilds it" in status
    with Memory.open(settings=settings_for(root)) as mem:
        assert mem.recall("gateway cache").index["action"] == "rebuild"
    assert _index_line(root)[1].startswith("index: ok")


def test_a_remnic_link_to_nothing_is_refused_and_never_followed_to_make_folders(root: Path, tmp_path: Path) -> None:
    state = root / ".remnic"
    outside = tmp_path / "outside" / "x"
    shutil.rmtree(state)
    state.symlink_to(outside)
    said = f"{state} is a symlink to {outside}, which does not exist"
    with pytest.raises(RemnicError, match="is a symlink to") as raised:
        Memory.open(settings=settings_for(root))
    assert raised.value.message.startswith(said) and raised.value.exit_code == 1
    for command in (["query", "gateway"], ["status"], ["reindex"], ["store", "Another fact here"]):
        line = _one_error_line(run_cli(*command, "--memory-dir", str(root)))
        assert line.startswith(f"remnic: error: {said}") and f"rm {state}" in line
    code, checks = _checks(root)
    assert code == 1 and checks["memory-dir"]["status"] == "fail" and checks["memory-dir"]["detail"].startswith(said)
    assert not (tmp_path / "outside").exists()


def test_an_embedding_cache_that_is_a_folder_is_kept_in_memory_and_doctor_says_so(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import numpy as np

    cache_path = root / ".remnic" / "embeddings.sqlite"
    for stale in root.joinpath(".remnic").glob("embeddings.sqlite*"):
        stale.unlink()
    cache_path.mkdir()
    with caplog.at_level(logging.WARNING):
        cache = EmbeddingCache(cache_path)
    assert f"embedding cache {cache_path} is a folder, not a file" in caplog.text and "mv " in caplog.text
    cache.put_many("m", {"h": np.ones(4, dtype=np.float32)})
    assert list(cache.get_many("m", ["h"], 4)) == ["h"]  # works, in memory
    cache.close()
    _, checks = _checks(root)
    check = checks["embedding-cache"]
    assert check["status"] == "warn" and check["detail"].startswith(f"embedding cache {cache_path} is a folder")
    assert "every rebuild embeds every text again" in check["detail"] and cache_path.is_dir()


# --- defect 8: messages ---


def test_messages_of_a_broken_model_name_the_fault_once_and_status_names_a_missing_rerank_model(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.json"
    monkeypatch.setenv("REMNIC_CONFIG_PATH", str(config))
    missing = tmp_path / "nothere.onnx"
    config.write_text(json.dumps({"embed": {"modelPath": str(missing)}}))
    _, checks = _checks(root)
    index = checks["index"]["detail"]
    assert index.startswith("model-error: ") and not index.startswith("index ")
    assert str(missing) not in index and "embedding-model" in index  # said once, by that check
    assert checks["embedding-model"]["status"] == "fail" and str(missing) in checks["embedding-model"]["detail"]
    assert all(not c["detail"].startswith("index ") for c in checks.values())
    query = run_cli("query", "gateway", "--memory-dir", str(root))
    [footer] = [x for x in query.out.splitlines() if "the files were scanned" in x]
    assert footer.startswith("embedding model unusable (embed.modelPath") and str(missing) in footer
    assert footer.endswith("the files were scanned; the index is fine") and "index unavailable" not in footer

    ce = tmp_path / "ce"
    config.write_text(json.dumps({"recall": {"rerank": str(ce)}}))
    status = run_cli("status", "--memory-dir", str(root))
    [line] = [x for x in status.out.splitlines() if x.startswith("rerank:")]
    assert status.code == 1 and line.startswith(f"rerank: missing (recall.rerank: rerank model not found: {ce}")
    ce.mkdir()
    (ce / "model.onnx").write_bytes(b"onnx bytes: status checks they are there, doctor runs them")
    line = next(x for x in run_cli("status", "--memory-dir", str(root)).out.splitlines() if x.startswith("rerank:"))
    assert f"rerank tokenizer not found: {ce / 'tokenizer.json'}" in line
    (ce / "tokenizer.json").write_text("{}")
    status = run_cli("status", "--json", "--memory-dir", str(root))
    assert status.code == 0 and status.json()["rerank"]["state"] == "ok"
    assert "rerank:" not in run_cli("status", "--memory-dir", str(root)).out
    config.write_text("{}")
    assert run_cli("status", "--json", "--memory-dir", str(root)).json()["rerank"] is None


def test_a_rebuild_removes_only_its_own_old_builds_from_the_index_folder(root: Path) -> None:
    index = root / ".remnic" / "index"
    kept = index / "CURRENT.bak"  # a person's folder (the old advice put a folder here)
    kept.mkdir(parents=True, exist_ok=True)
    (kept / "note.txt").write_text("mine")
    assert run_cli("reindex", "--memory-dir", str(root)).code == 0
    assert run_cli("reindex", "--memory-dir", str(root)).code == 0  # the first build is now old: removed
    assert (kept / "note.txt").read_text() == "mine"
    builds = [p.name for p in index.iterdir() if p.name.startswith("build-")]
    assert len(builds) == 1 and (index / "CURRENT").read_text().strip() == builds[0]
