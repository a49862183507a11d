"""Bring-your-own models that fail or change (round 32): never taken for a damaged index.

Tiny real ONNX models (the builders of tests/test_rerank.py), a few memories each:

- a model that fails at run time (a tokenizer.json that is not the model's own: ids past its table)
  never rebuilds the index: the rerank stage is skipped saying why, a query the embedding model
  fails on scans the files (or raises, naming the setting and the file);
- ``status``, ``doctor`` and ``reindex`` name a missing or corrupt model's setting and file, and
  doctor checks the configured models (loads them, runs them) beside its other checks;
- the index manifest records the vectors' width: another width under a pinned ``embed.modelId``
  is a model mismatch, and a legacy index read at the wrong width rebuilds without a stray
  "closed database" traceback;
- an explicit ``embed.outputName`` naming the default output keeps the model id; a pinned clock
  makes the rerank stage reproducible.
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from remnic.config import settings_for
from remnic.errors import RemnicError
from remnic.index.embed import Embedder, EmbedderSpec, EmbeddingError
from remnic.service.memory import Memory

pytest.importorskip("onnx")
from test_rerank import VOCAB, write_cross_encoder, write_embedder, write_tokenizer

MEMORIES = [
    {"content": "Ben keeps a zebra in the garden.", "category": "fact", "id": "mem_ben"},
    {"content": "Ana has two pets at home: a cat and a dog.", "category": "fact", "id": "mem_ana"},
    {"content": "We ship releases every Tuesday.", "category": "decision", "id": "mem_ship"},
]


def big_tokenizer(path: Path) -> Path:
    """A tokenizer.json like the models' own plus 501 more words: 'xylophone' gets id 580, past their 80 rows."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    vocab = [*VOCAB, *(f"w{i}" for i in range(500)), "xylophone"]
    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.save(str(path))
    return path


def current(root: Path) -> str:
    return (root / ".remnic" / "index" / "CURRENT").read_text().strip()


def new_repo(root: Path, **settings: Any) -> None:
    with Memory.init(root, settings=settings_for(root, **settings)) as mem:
        mem.import_records(MEMORIES)


# --- S1, M2, m2: a model failing at run time is skipped or scanned around, never a rebuild ---


def test_a_rerank_model_failing_at_run_time_is_skipped_and_the_recall_otherwise_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    new_repo(root)
    ce = write_cross_encoder(tmp_path / "ce")
    big_tokenizer(ce / "tokenizer.json")
    with Memory.open(settings=settings_for(root)) as mem:
        plain = mem.recall("zebra xylophone garden", top_k=3)
    built = current(root)
    with Memory.open(settings=settings_for(root, recall={"rerank": str(ce)})) as mem:
        for _ in range(2):
            result = mem.recall("zebra xylophone garden", top_k=3, xray=True)
            assert current(root) == built  # no rebuild
            assert [h.id for h in result.hits] == [h.id for h in plain.hits]  # no file scan: the same hits
            assert {h.served_by for h in result.hits} != {"recent-scan"}
            stage = result.rerank
            assert stage is not None and stage.admitted == 0 and stage.reason.startswith("skipped: recall.rerank ")
            assert str((ce / "model.onnx").resolve()) in stage.reason
            assert "likely does not belong to this model" in stage.reason and "token id 580" in stage.reason
            tier = result.xray.tier_explain.tier_reason
            assert "rerank skipped: recall.rerank" in tier and "reranked by" not in tier


def test_a_query_the_embedding_model_fails_on_never_rebuilds_the_index(tmp_path: Path) -> None:
    model = write_embedder(tmp_path / "emb16.onnx")
    tok = big_tokenizer(tmp_path / "big.json")
    root = tmp_path / "mem"
    embed = {"model_path": str(model), "tokenizer_path": str(tok)}
    new_repo(root, embed=embed)
    with Memory.open(settings=settings_for(root, embed=embed)) as mem:
        assert mem.recall("zebra garden").hits[0].id == "mem_ben"  # words the model knows: fine
        built = current(root)
        for _ in range(2):
            result = mem.recall("zebra xylophone")
            assert current(root) == built
            assert result.index["action"] == "unavailable"
            reason = result.index["reason"]
            assert "not the index" in reason and f"embed.modelPath {model}" in reason
            assert f"embed.tokenizerPath {tok}" in reason and "likely does not belong" in reason
            assert [h.id for h in result.hits] == ["mem_ben"]  # the files, scanned
    strict = settings_for(root, embed=embed, recall={"fallback_scan": False})
    with Memory.open(settings=strict) as mem:
        with pytest.raises(EmbeddingError, match=r"embed\.tokenizerPath") as raised:
            mem.recall("zebra xylophone")
        assert isinstance(raised.value, RemnicError) and raised.value.exit_code == 1
    assert current(root) == built


def test_a_relative_model_path_is_named_as_the_absolute_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "mem"
    new_repo(root)
    with Memory.open(settings=settings_for(root, embed={"model_path": "models/nothere.onnx"})) as mem:
        result = mem.recall("zebra")
        assert (
            f"embed.modelPath: embedding model file not found or unreadable: {tmp_path}/models/nothere.onnx"
            in (result.index["reason"])
        )
        assert result.hits[0].id == "mem_ben"


# --- S4, M1: status, doctor and reindex on a missing or corrupt model ---


@pytest.fixture()
def cli_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    root = tmp_path / "mem"
    new_repo(root)
    models = tmp_path / "models"
    models.mkdir()
    write_embedder(models / "emb16.onnx")
    write_tokenizer(models / "tok.json")
    big_tokenizer(models / "big.json")
    write_cross_encoder(models / "ce")
    (models / "corrupt.onnx").write_bytes(b"\x08\x07garbage" * 100)

    def configure(config: dict[str, Any]) -> Path:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        monkeypatch.setenv("REMNIC_CONFIG_PATH", str(path))
        return models

    return root, configure


def _doctor(root: Path) -> dict[str, dict[str, Any]]:
    result = run_cli("doctor", "--json", "--memory-dir", str(root))
    return {c["name"]: c for c in json.loads(result.out)["checks"]}


def test_status_doctor_and_reindex_name_a_missing_model_and_its_setting(cli_repo: tuple[Path, Any]) -> None:
    root, configure = cli_repo
    missing = configure({}) / "nothere.onnx"
    configure({"embed": {"modelPath": str(missing)}})
    before = current(root)
    status = run_cli("status", "--memory-dir", str(root))
    assert status.code == 1 and "Traceback" not in status.err
    [line] = [x for x in status.out.splitlines() if x.startswith("index:")]
    assert line.startswith("index: model-error (embed.modelPath") and str(missing) in line
    assert "rebuilds it" not in line
    checks = _doctor(root)
    model = checks["embedding-model"]
    assert (
        model["status"] == "fail" and model["detail"].startswith("embed.modelPath ") and str(missing) in model["detail"]
    )
    assert checks["memory-files"]["status"] == "ok" and "merge" in checks  # the other checks still ran
    assert "rebuilds it" not in checks["index"]["detail"]
    reindex = run_cli("reindex", "--memory-dir", str(root))
    assert reindex.code == 1
    assert reindex.err.strip().splitlines() == [
        f"remnic: error: embed.modelPath: embedding model file not found or unreadable: {missing}"
    ]
    assert current(root) == before


def test_a_corrupt_model_is_a_failed_check_not_an_index_the_next_recall_rebuilds(cli_repo: tuple[Path, Any]) -> None:
    root, configure = cli_repo
    models = configure({})
    corrupt = models / "corrupt.onnx"
    configure({"embed": {"modelPath": str(corrupt)}})
    checks = _doctor(root)
    assert checks["embedding-model"]["status"] == "fail"
    assert checks["embedding-model"]["detail"].startswith(f"embed.modelPath {corrupt}: could not load the ONNX model")
    assert checks["index"]["index"]["state"] == "model-error" and "rebuilds it" not in checks["index"]["detail"]
    reindex = run_cli("reindex", "--memory-dir", str(root))
    assert reindex.code == 1 and len(reindex.err.strip().splitlines()) == 1
    assert reindex.err.startswith(f"remnic: error: embed.modelPath {corrupt}: could not load the ONNX model")


def test_doctor_loads_and_runs_the_configured_models(cli_repo: tuple[Path, Any]) -> None:
    root, configure = cli_repo
    models = configure({})
    good = {"modelPath": str(models / "emb16.onnx"), "tokenizerPath": str(models / "tok.json")}
    configure({"embed": good, "recall": {"rerank": str(models / "ce")}})
    checks = _doctor(root)
    emb, rr = checks["embedding-model"], checks["rerank-model"]
    assert emb["status"] == "ok" and rr["status"] == "ok"
    assert "inputs attention_mask, input_ids; output last_hidden_state (batch, seq, 16); 16 dims" in emb["detail"]
    assert "inputs attention_mask, input_ids, token_type_ids; output logits (batch, 1)" in rr["detail"]
    # A tokenizer that is not the model's: the probe runs its highest id through the model.
    configure(
        {"embed": {**good, "tokenizerPath": str(models / "big.json")}, "recall": {"rerank": str(models / "nope")}}
    )
    checks = _doctor(root)
    emb, rr = checks["embedding-model"], checks["rerank-model"]
    assert emb["status"] == "fail" and "embed.tokenizerPath" in emb["detail"]
    assert "likely does not belong to this model" in emb["detail"]
    assert rr["status"] == "fail" and rr["detail"].startswith("recall.rerank: rerank model not found: ")
    assert str(models / "nope") in rr["detail"]
    configure({})
    assert "rerank-model" not in _doctor(root)  # not configured: no check


# --- M3: the vectors' width is recorded; a pinned id with another width is a model mismatch ---


def test_a_pinned_model_id_with_a_model_of_another_width_is_a_model_mismatch(tmp_path: Path) -> None:
    tok = write_tokenizer(tmp_path / "tok.json")
    wide, narrow = write_embedder(tmp_path / "emb32.onnx", dim=32, seed=1), write_embedder(tmp_path / "emb16.onnx")
    root = tmp_path / "mem"

    def settings(model: Path) -> Any:
        return settings_for(root, embed={"model_path": str(model), "tokenizer_path": str(tok), "model_id": "mine"})

    new_repo(root, embed=settings(wide).embed)
    with Memory.open(settings=settings(wide)) as mem:
        mem.recall("zebra")
        built = mem.index.manifest()
        assert built is not None and built.dim == 32 and mem.index.health().state == "ok"
    with Memory.open(settings=settings(narrow)) as mem:
        health = mem.index.health()
        assert health.state == "model-mismatch" and "embed.modelId 'mine'" in health.detail
        assert "32 wide" in health.detail and "16" in health.detail
        result = mem.recall("zebra garden")
        assert result.index["action"] == "rebuild" and "model-mismatch" in result.index["reason"]
        rebuilt = mem.index.manifest()
        assert rebuilt is not None and rebuilt.dim == 16 and result.hits[0].id == "mem_ben"


def test_an_index_of_unrecorded_width_read_at_another_rebuilds_without_a_stray_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    tok = write_tokenizer(tmp_path / "tok.json")
    narrow, wide = write_embedder(tmp_path / "emb16.onnx"), write_embedder(tmp_path / "emb32.onnx", dim=32, seed=1)
    root = tmp_path / "mem"

    def settings(model: Path) -> Any:
        return settings_for(root, embed={"model_path": str(model), "tokenizer_path": str(tok), "model_id": "mine"})

    new_repo(root, embed=settings(narrow).embed)
    with Memory.open(settings=settings(narrow)) as mem:
        mem.recall("zebra")
    catalog = root / ".remnic" / "index" / current(root) / "catalog.sqlite"
    with sqlite3.connect(catalog) as conn:  # an index built before the width was recorded
        conn.execute("DELETE FROM meta WHERE key = 'dim'")
    conn.close()
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with Memory.open(settings=settings(wide)) as mem:
        legacy = mem.index.manifest()
        assert legacy is not None and legacy.dim == 0
        result = mem.recall("zebra garden")
        assert result.index["action"] == "none"  # rebuilt inside the recall's retry, which then found it fresh
        rebuilt = mem.index.manifest()
        assert rebuilt is not None and rebuilt.dim == 32 and result.hits[0].id == "mem_ben"
    gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []


# --- m1, m3 ---


def test_an_explicit_default_output_name_keeps_the_model_id(tmp_path: Path) -> None:
    model, tok = write_embedder(tmp_path / "e.onnx"), write_tokenizer(tmp_path / "tok.json")
    pooled = write_embedder(tmp_path / "p.onnx", pooled_output=True)

    def model_id(path: Path, **kw: Any) -> str:
        return Embedder(EmbedderSpec(model_path=path, tokenizer_path=tok, **kw)).model_id

    assert model_id(model, output_name="last_hidden_state") == model_id(model)
    assert model_id(pooled, pooling="none", output_name="sentence_embedding") == model_id(pooled, pooling="none")
    assert model_id(model, output_name="other").endswith("+out-other")  # another output: other vectors
    assert model_id(pooled, pooling="none", output_name="last_hidden_state").endswith("+out-last_hidden_state")


def test_a_pinned_clock_scores_the_whole_rerank_top_n_and_reports_no_time(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as mem:
        mem.import_records(
            [{"content": f"Zebra note {n}: the zebra {w}.", "category": "fact"} for n, w in enumerate(VOCAB[4:16])]
        )
    ce = write_cross_encoder(tmp_path / "ce", boost={"zebra": 2.0})
    recall = {"rerank": str(ce), "rerank_budget_ms": 0, "rerank_top_n": 12}
    with Memory.open(settings=settings_for(root, recall=recall)) as mem:
        live = mem.recall("zebra", top_k=12)
        assert live.rerank is not None and live.rerank.admitted == 8  # the budget: the first batch only
        assert " ms (budget 0 ms)" in live.rerank.reason
        runs = [mem.recall("zebra", top_k=12, xray=True, clock=1_709_510_400_000) for _ in range(2)]
    for pinned in runs:
        stage = pinned.rerank
        assert stage is not None and stage.considered == stage.admitted == 12
        assert stage.reason.endswith("12 of 12 scored (clock pinned: no time budget)") and " ms" not in stage.reason
        assert all(h.terms.rerank > 0 for h in pinned.hits)
    first, second = (r.xray.to_dict() for r in runs)
    assert first == second


def test_a_model_failure_over_http_is_503_model_error_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_server_http import Env

    from remnic.server import Api, Authenticator, TokenStore, running_server

    monkeypatch.setenv("REMNIC_TOKENS_PATH", str(tmp_path / "secrets" / "tokens.json"))
    model, tok = write_embedder(tmp_path / "emb16.onnx"), big_tokenizer(tmp_path / "big.json")
    root, embed = tmp_path / "mem", {"model_path": str(model), "tokenizer_path": str(tok)}
    new_repo(root, embed=embed)
    store = TokenStore()
    alice, _ = store.generate("alice")
    strict = settings_for(root, embed=embed, recall={"fallback_scan": False})
    with Memory.open(settings=strict) as mem, running_server(Api(mem), Authenticator(store)) as server:
        env = Env(server.url, server.server_address[1], alice, alice, mem, root, store)
        r = env.call("POST", "/remnic/v1/recall", {"query": "zebra xylophone"})
    assert r.status == 503 and r.json()["code"] == "model_error"
    assert "embed.tokenizerPath" in r.json()["error"]
