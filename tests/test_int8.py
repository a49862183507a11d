"""``embed.int8``: the packaged model's int8 weights run as int8 matrix products (remnic.index.int8)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from remnic.index import int8
from remnic.index.embed import DEFAULT_MODEL_ID, Embedder, EmbedderSpec
from remnic.index.embed_spec import INT8_MODEL_ID, _default_model_path, _file_sha256

TEXTS = [
    "Remnic keeps agent memory as plain markdown files in git.",
    "The staging database listens on port 5433 since the migration.",
    "ok",
    "Caroline joined a mentorship program for LGBTQ youth on the weekend before 17 July 2023.",
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own, and no rewrite remembered from an earlier test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(int8, "_memo", {})
    return tmp_path / "cache" / "remnic" / "models"


def _cached(folder: Path) -> Path:
    """The one cached rewrite of the packaged model in ``folder``."""
    digest = _file_sha256(_default_model_path(), "model")
    (found,) = folder.glob(f"{digest[:24]}-*-i8v{int8.REWRITE_VERSION}.onnx")
    return found


def test_the_rewrite_feeds_the_stored_int8_weights_to_int8_products() -> None:
    published = _default_model_path().read_bytes()
    data, count = int8.rewrite(published)
    assert count == 36  # 6 layers x (query, key, value, output, two feed-forward)
    before, after = onnx.load_from_string(published), onnx.load_from_string(data)
    ops = [n.op_type for n in after.graph.node]
    assert ops.count("MatMulInteger") == 36 and ops.count("DynamicQuantizeLinear") == 36
    # The same int8 weights, not a second quantization of float ones.
    weights = {i.name: i.raw_data for i in before.graph.initializer if i.data_type == onnx.TensorProto.INT8}
    assert {i.name: i.raw_data for i in after.graph.initializer if i.name in weights} == weights
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    assert [o.name for o in session.get_outputs()] == ["last_hidden_state"]


def test_int8_vectors_stay_close_to_the_float_ones_and_do_not_depend_on_batch_mates() -> None:
    fast = Embedder(EmbedderSpec(int8=True)).embed(TEXTS)
    floats = Embedder(EmbedderSpec(int8=False)).embed(TEXTS)
    cosines = (fast * floats).sum(axis=1)
    assert cosines.min() > 0.97, cosines
    assert np.abs(fast - floats).max() > 1e-3  # int8 really ran: the float products give other vectors
    # One text a call: a text's vector is the same alone, in any company, with any batch size.
    single = Embedder(EmbedderSpec(batch_size=1, int8=True))
    alone = np.stack([single.embed([t])[0] for t in TEXTS])
    np.testing.assert_allclose(fast, alone, atol=1e-5)
    crowded = Embedder(EmbedderSpec(batch_size=16, int8=True)).embed(["a much longer text " * 30, *TEXTS])[1:]
    np.testing.assert_allclose(crowded, alone, atol=1e-5)


def test_model_ids_name_the_products() -> None:
    assert Embedder(EmbedderSpec()).model_id == DEFAULT_MODEL_ID  # float products by default
    assert Embedder(EmbedderSpec(int8=True)).model_id == INT8_MODEL_ID != DEFAULT_MODEL_ID


def test_the_next_process_loads_the_cached_rewrite_without_onnx(cache: Path, tmp_path: Path) -> None:
    first = Embedder(EmbedderSpec(int8=True)).embed(TEXTS)
    assert _cached(cache).is_file()
    script = (
        "import sys, json; from remnic.index.embed import Embedder, EmbedderSpec;"
        f"v = Embedder(EmbedderSpec(int8=True)).embed({TEXTS!r});"
        "print(json.dumps({'onnx': 'onnx' in sys.modules, 'v': v.tolist()}))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    import json

    said = json.loads(out.stdout)
    assert said["onnx"] is False  # read from the cache: nothing was rewritten
    np.testing.assert_allclose(np.array(said["v"], dtype=np.float32), first, atol=1e-5)


def test_a_damaged_cached_rewrite_is_made_again(cache: Path) -> None:
    reference = Embedder(EmbedderSpec(int8=True)).embed(TEXTS[:2])
    damaged = _cached(cache)
    damaged.write_bytes(b"not an onnx model")
    int8._memo.clear()  # as a new process would find it
    again = Embedder(EmbedderSpec(int8=True)).embed(TEXTS[:2])
    np.testing.assert_allclose(again, reference, atol=1e-5)
    assert _cached(cache).stat().st_size > 1_000_000  # replaced by a good rewrite


def test_a_cached_rewrite_damaged_so_that_it_still_loads_is_not_run(cache: Path, tmp_path: Path) -> None:
    """Damage inside the weights leaves a file onnxruntime loads and runs, giving wrong vectors: the
    file's own hash, in its name, is checked before it is used."""
    reference = Embedder(EmbedderSpec(int8=True)).embed(TEXTS[:2])
    cached = _cached(cache)
    data = bytearray(cached.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 200_000] = bytes(200_000)  # zeroes inside the weights: same size, still a model
    cached.write_bytes(bytes(data))
    damaged = onnx.load_from_string(bytes(data))  # still parses: a load failure would not catch it
    assert len(damaged.graph.node) > 0
    int8._memo.clear()
    np.testing.assert_allclose(Embedder(EmbedderSpec(int8=True)).embed(TEXTS[:2]), reference, atol=1e-5)
    assert _cached(cache).read_bytes() != bytes(data)


def test_a_relative_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert int8.cache_dir() == tmp_path / "home" / ".cache" / "remnic" / "models"


def test_without_onnx_the_error_names_the_setting_and_the_cure(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from remnic.index.embed_spec import EmbeddingError

    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(EmbeddingError, match=r"embed\.int8.*pip install onnx, or set embed\.int8 to false"):
        Embedder(EmbedderSpec(int8=True)).embed(["x"])
    assert Embedder(EmbedderSpec(int8=False)).embed(["x"]).shape == (1, 384)


def test_a_temporary_file_left_by_a_killed_writer_is_removed(cache: Path) -> None:
    cache.mkdir(parents=True)
    stale, fresh = cache / ".model.onnx.tmp-1-dead", cache / ".model.onnx.tmp-2-live"
    for f in (stale, fresh):
        f.write_bytes(b"half a model")
    os.utime(stale, (1, 1))
    Embedder(EmbedderSpec(int8=True)).embed(["x"])
    assert not stale.exists() and fresh.exists()  # another process may be writing the fresh one
    assert _cached(cache).stat().st_mode & 0o044  # readable by others sharing the folder


def test_an_unwritable_cache_folder_still_runs_int8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(int8, "_memo", {})
    embedder = Embedder(EmbedderSpec(int8=True))
    got = embedder.embed(TEXTS[:2])
    key = _file_sha256(_default_model_path(), "model") + f"-i8v{int8.REWRITE_VERSION}.onnx"
    assert isinstance(int8._memo[key], bytes)  # kept in memory
    floats = Embedder(EmbedderSpec(int8=False)).embed(TEXTS[:2])
    assert np.abs(got - floats).max() > 1e-3 and blocker.read_text().startswith("a file")


def test_a_model_without_int8_weights_is_left_as_it_is(tmp_path: Path) -> None:
    from test_rerank import write_embedder

    model = write_embedder(tmp_path / "float.onnx")
    data = model.read_bytes()
    assert int8.rewrite(data) == (data, 0)


def test_switching_int8_rebuilds_the_index_and_says_why(tmp_path: Path, cache: Path) -> None:
    from remnic.config import settings_for
    from remnic.service.memory import Memory

    root = tmp_path / "mem"
    with Memory.init(root, settings=settings_for(root)) as mem:
        mem.import_records([{"content": "Ana prefers tabs over spaces", "category": "preference"}])
        assert mem.index.manifest().model_id == DEFAULT_MODEL_ID
    with Memory.open(settings=settings_for(root, embed={"int8": True})) as mem:
        result = mem.recall("which indentation does Ana like")
        assert result.index["action"] == "rebuild" and "embed.int8 changed" in result.index["reason"]
        assert [h.content for h in result.hits][:1] == ["Ana prefers tabs over spaces"]
        assert mem.index.manifest().model_id == INT8_MODEL_ID
